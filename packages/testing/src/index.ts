export * from './fake-s3.ts';
export * from './fake-vault.ts';
export * from './example-environment.ts';
