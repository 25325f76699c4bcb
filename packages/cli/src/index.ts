export { defaultServices, executeIntegration, type RunServices } from './compose.ts';
export { type CliDeps, type CliIo, integrationOptions, main, runCli, VERSION } from './main.ts';
export { integrations } from './registry.ts';
export { runIntegrationLoop } from './run-integration.ts';
