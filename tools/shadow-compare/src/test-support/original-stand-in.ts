/**
 * A STAND-IN for the original qontract-reconcile (Python, which cannot run in
 * the tests): it takes the original's command line, runs this project's CLI
 * with it, and prints that run's action lines in the original's log format
 * (`[time] [INFO] [DRY-RUN] [openshift_base.py:apply:429] - [...]`), in
 * reverse order (the original's thread pool does not keep one), beside a
 * line that is no action. Its exit code is the run's.
 *
 * STAND_IN_PLANT=1 plants a difference: the last action is left out and one
 * the run never planned is added.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const bin = join(
  dirname(require.resolve('@qontract/cli/package.json')),
  'bin/qontract-reconcile.js',
);
const run = spawnSync(process.execPath, [bin, ...process.argv.slice(2), '--log-format', 'json'], {
  encoding: 'utf8',
});
const actions = run.stderr
  .split('\n')
  .filter((l) => l.startsWith('{'))
  .map((l) => (JSON.parse(l) as { msg: string }).msg)
  .filter((m) => m.startsWith("['"));
if (process.env.STAND_IN_PLANT === '1') {
  actions.pop();
  actions.push(
    "['delete', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'planted']",
  );
}
const line = (where: string, msg: string) =>
  process.stderr.write(`[2026-01-01 00:00:00] [INFO] [DRY-RUN] [${where}] - ${msg}\n`);
line('gql.py:init:120', 'using gql endpoint file:///app-interface');
for (const a of actions.reverse()) line('openshift_base.py:apply:429', a);
process.exitCode = run.status ?? 1;
