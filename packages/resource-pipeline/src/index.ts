export * from './define.ts';
export * from './model.ts';
export * from './namespaces.generated.ts';
export * from './providers/index.ts';
export * from './run.ts';
export * from './select.ts';
export * from './specs.ts';
export * from './templates.ts';
