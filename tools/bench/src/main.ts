/**
 * `npm run bench [-- --small] [--latency 5,50] [--only TEXT] [--cpu-prof DIR] [--out FILE]
 *   [--loop-iterations N]`
 *
 * Runs the benchmark suite and writes the JSON report (default
 * tools/bench/results/latest.json, or latest-small.json for --small) and,
 * for the full suite, the markdown table into docs/benchmarks.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { markdownReport, spliceResults } from './report.ts';
import { runSuite } from './run-suite.ts';
import { largeSuite, scenarioName, smallSuite } from './scenarios.ts';
import { REPO_ROOT } from './tree.ts';

const { values } = parseArgs({
  options: {
    small: { type: 'boolean', default: false },
    latency: { type: 'string' },
    concurrency: { type: 'string' },
    'loop-iterations': { type: 'string' },
    only: { type: 'string', multiple: true },
    'cpu-prof': { type: 'string' },
    out: { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
  },
});

const latencies = values.latency?.split(',').map(Number);
const suiteOptions = {
  ...(latencies ? { latencies } : {}),
  ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
  ...(values['loop-iterations'] ? { loopIterations: Number(values['loop-iterations']) } : {}),
};
const suiteName = values.small ? 'small' : 'large';
let scenarios = values.small ? smallSuite(suiteOptions) : largeSuite(suiteOptions);
if (values.only?.length) {
  scenarios = scenarios.filter((s) => values.only!.some((o) => scenarioName(s).includes(o)));
}

const startedAt = performance.now();
const report = await runSuite(scenarios, {
  suite: suiteName,
  cpuProfileDir: values['cpu-prof'],
  progress: (line) => process.stdout.write(`${line}\n`),
});
const markdown = markdownReport(report);
process.stdout.write(`\n${markdown}`);

const out =
  values.out ??
  join(REPO_ROOT, 'tools/bench/results', values.small ? 'latest-small.json' : 'latest.json');
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`\nJSON report: ${out}\n`);
// Partial and CI runs never replace the published table.
if (!values.small && !values.only?.length && !values['no-docs']) {
  const docs = join(REPO_ROOT, 'docs/benchmarks.md');
  await writeFile(docs, spliceResults(await readFile(docs, 'utf8').catch(() => ''), markdown));
  // The repository lints Markdown with Biome: leave the page as `biome format` would.
  spawnSync(join(REPO_ROOT, 'node_modules/.bin/biome'), ['format', '--write', docs], {
    stdio: 'ignore',
  });
  process.stdout.write(`Table written to ${docs}\n`);
}
process.stdout.write(`Total ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
const failed = report.scenarios.filter((s) => s.exitCode !== 0);
if (failed.length) {
  process.stderr.write(
    `${failed.length} run(s) exited non-zero: ${failed.map((s) => s.name).join('; ')}\n`,
  );
  process.exitCode = 1;
}
