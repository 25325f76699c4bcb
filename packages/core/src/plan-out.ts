import { writeFile } from 'node:fs/promises';
import type { RunContext } from './integration.ts';

/**
 * `--plan-out FILE`: writes the run's plan as JSON. Actions are plain data
 * (`{action, cluster, namespace, kind, name, reason, ...}`); callers leave out
 * bodies that may hold secrets. Plan files are CI artifacts, so every secret
 * value the run read is masked in them as in the log: in each string (where a
 * diff quotes an object's JSON, one level of escaping deeper than the file's
 * own), then in the file's text.
 */
export async function writePlanOut(
  ctx: Pick<RunContext, 'globals' | 'integration' | 'dryRun' | 'redactor'>,
  actions: readonly unknown[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  const file = ctx.globals.planOut;
  if (!file) return;
  const doc = { integration: ctx.integration, dryRun: ctx.dryRun, ...extra, actions };
  const { redactor } = ctx;
  const text = JSON.stringify(
    doc,
    (_key, value: unknown) => (typeof value === 'string' ? redactor.redact(value) : value),
    2,
  );
  await writeFile(file, `${redactor.redact(text)}\n`);
}
