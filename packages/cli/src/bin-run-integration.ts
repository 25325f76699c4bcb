import { runIntegrationLoop } from './run-integration.ts';

/** @public Loaded by bin/run-integration.js through the Node-version launcher. */
export default async function runIntegrationMain(): Promise<void> {
  process.exitCode = await runIntegrationLoop();
}
