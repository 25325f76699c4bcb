export * from './example-environment.ts';
export * from './fake-github.ts';
export * from './fake-registry.ts';
export * from './fake-s3.ts';
export * from './fake-vault.ts';
