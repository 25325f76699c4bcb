export { integrations } from './all-integrations.ts';
