export * from './client/index.ts';
export * from './embedded/index.ts';
