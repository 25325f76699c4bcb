import { writeFile } from 'node:fs/promises';
import type { RunContext } from './integration.ts';

/**
 * `--plan-out FILE`: writes the run's plan as JSON. Actions are plain data
 * (`{action, cluster, namespace, kind, name, reason, ...}`); callers leave out
 * bodies that may hold secrets.
 */
export async function writePlanOut(
  ctx: Pick<RunContext, 'globals' | 'integration' | 'dryRun'>,
  actions: readonly unknown[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  const file = ctx.globals.planOut;
  if (!file) return;
  const doc = { integration: ctx.integration, dryRun: ctx.dryRun, ...extra, actions };
  await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
}
