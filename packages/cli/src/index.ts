export { integrations } from './registry.ts';
