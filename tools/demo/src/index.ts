export * from './demo.ts';
