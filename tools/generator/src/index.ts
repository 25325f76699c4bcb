export * from './readme-list.ts';
export * from './scaffold.ts';
