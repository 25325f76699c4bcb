export * from './model.ts';

export * from './scenarios.ts';
