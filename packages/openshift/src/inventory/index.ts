export * from './errors.ts';
export * from './resource-inventory.ts';
