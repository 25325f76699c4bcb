import { runIntegrationLoop } from './run-integration.ts';

export default async function runIntegrationMain(): Promise<void> {
  process.exitCode = await runIntegrationLoop();
}
