export * from './client/index.ts';
