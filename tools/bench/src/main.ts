/**
 * `npm run bench [-- --small] [--latency 5,50] [--only TEXT] [--cpu-prof DIR] [--out FILE]
 *   [--loop-iterations N] [--loop-mode-iterations N]`
 *
 * Runs the benchmark suite and writes the JSON report (default
 * tools/bench/results/latest.json, or latest-small.json for --small) and,
 * for the full suite, the headline into docs/benchmarks.md and every table
 * into docs/benchmarks-history.md; --scaling writes its table into
 * docs/benchmarks.md and its chart into docs/benchmarks-scaling.svg.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { scalingChartOfReport } from './chart.ts';
import { headlineMarkdown, markdownReport, scalingLines, spliceResults } from './report.ts';
import { runSuite } from './run-suite.ts';
import { largeSuite, type Scenario, scalingSuite, scenarioName, smallSuite } from './scenarios.ts';
import { runStartupMeasurements, startupMarkdown } from './startup.ts';
import { REPO_ROOT } from './tree.ts';
import { runWatchBench, watchMarkdown } from './watch.ts';

const USAGE = `Usage: npm run bench [-- OPTIONS]

Runs the benchmark suite against simulated clusters (and fake services) on this machine and
writes the JSON report; the full large set also writes its headline into docs/benchmarks.md and
every table into docs/benchmarks-history.md, and the full --scaling set its table and chart
(docs/benchmarks-scaling.svg) into docs/benchmarks.md.

Options:
  --small                 the tiny set (seconds; what CI runs): results/latest-small.json
  --latency MS[,MS...]    latencies injected at the simulated servers (default 5,50; small: 5)
  --concurrency N         --thread-pool-size of the measured runs (default 10)
  --loop-iterations N     runs of each run-integration loop scenario (RSS watch)
  --loop-mode-iterations N  runs of the loop-mode scenario: one cold, N-1 warm (default 6;
                          small: 3)
  --scaling               instead of the suite: the loop-mode scenario (one cold run, then
                          warm ones; --loop-mode-iterations, default 3) at about 5k, 50k
                          and 200k objects (2, 20 and 80 clusters × 50 × 50; --small: tiny)
                          @50 ms, with a table of how wall, CPU, RSS and requests grow
  --only TEXT             only the scenarios whose name contains TEXT (repeatable); 'startup'
                          selects the start-up measurements, 'watch mode' the watch-mode one
                          (polling loop vs WATCH=true: idle requests, drift reaction, RSS)
  --cpu-prof DIR          write a .cpuprofile of each measured run into DIR
  --out FILE              the JSON report's path (default tools/bench/results/latest*.json;
                          scaling*.json with --scaling)
  --no-docs               never write the docs (benchmarks.md, its history and chart)
  -h, --help              this text
`;

function parseOptions() {
  try {
    return parseArgs({
      options: {
        small: { type: 'boolean', default: false },
        scaling: { type: 'boolean', default: false },
        latency: { type: 'string' },
        concurrency: { type: 'string' },
        'loop-iterations': { type: 'string' },
        'loop-mode-iterations': { type: 'string' },
        only: { type: 'string', multiple: true },
        'cpu-prof': { type: 'string' },
        out: { type: 'string' },
        'no-docs': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (e) {
    // A usage error, not a crash: say what is wrong and how to ask for help, no stack.
    process.stderr.write(`bench: ${(e as Error).message}\nSee: npm run bench -- --help\n`);
    process.exit(2);
  }
}

const values = parseOptions();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const latencies = values.latency?.split(',').map(Number);
const suiteOptions = {
  ...(latencies ? { latencies } : {}),
  ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
  ...(values['loop-iterations'] ? { loopIterations: Number(values['loop-iterations']) } : {}),
  ...(values['loop-mode-iterations']
    ? { loopModeIterations: Number(values['loop-mode-iterations']) }
    : {}),
};
const suiteName = values.small ? 'small' : 'large';
let scenarios: Scenario[] = values.scaling
  ? scalingSuite(values.small, suiteOptions)
  : values.small
    ? smallSuite(suiteOptions)
    : largeSuite(suiteOptions);
const selected = (name: string) =>
  !values.only?.length || values.only.some((o) => name.includes(o));
scenarios = scenarios.filter((s) => selected(scenarioName(s)));

const startedAt = performance.now();
const report = await runSuite(scenarios, {
  suite: suiteName,
  cpuProfileDir: values['cpu-prof'],
  progress: (line) => process.stdout.write(`${line}\n`),
});
// Start-up of the commands, sources against the bundle (`--only startup` runs only these).
const startup = await runStartupMeasurements({
  runs: values.small ? 5 : 10,
  selected: (name) => !values.scaling && selected(name),
  progress: (line) => process.stdout.write(`${line}\n`),
});
// Watch mode beside the polling loop (`--only 'watch mode'` runs only this).
const watch =
  !values.scaling && selected('watch mode')
    ? await runWatchBench({
        small: values.small,
        latencyMs: latencies?.at(-1) ?? (values.small ? 5 : 50),
        ...(values.small ? { idleSeconds: 5, edits: 10 } : {}),
        progress: (line) => process.stdout.write(`${line}\n`),
      })
    : undefined;
/** The suite's tables (all of them, or the headline) followed by start-up and watch mode. */
const withStartupAndWatch = (suiteTables: string) =>
  [suiteTables, startupMarkdown(startup), watch ? `\n${watchMarkdown(watch).join('\n')}\n` : '']
    .filter(Boolean)
    .join('\n');
const markdown = withStartupAndWatch(report.scenarios.length ? markdownReport(report) : '');
process.stdout.write(`\n${markdown}`);

const out =
  values.out ??
  join(
    REPO_ROOT,
    'tools/bench/results',
    `${values.scaling ? 'scaling' : 'latest'}${values.small ? '-small' : ''}.json`,
  );
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify({ ...report, startup, watch }, null, 2)}\n`);
process.stdout.write(`\nJSON report: ${out}\n`);
// Partial and CI runs never replace the published tables.
if (!values.small && !values.only?.length && !values['no-docs']) {
  const short = join(REPO_ROOT, 'docs/benchmarks.md');
  const history = join(REPO_ROOT, 'docs/benchmarks-history.md');
  const pages: Array<[string, string, string]> = [];
  if (values.scaling) {
    const svg = scalingChartOfReport(report);
    if (svg) {
      const chart = join(REPO_ROOT, 'docs/benchmarks-scaling.svg');
      await writeFile(chart, svg);
      process.stdout.write(`Chart written to ${chart}\n`);
      const loops = report.scenarios.filter((r) => r.kind === 'loop');
      pages.push([short, 'scaling', `${scalingLines(loops).join('\n').trim()}\n`]);
    }
  } else {
    const headline = withStartupAndWatch(report.scenarios.length ? headlineMarkdown(report) : '');
    pages.push([short, 'results', headline], [history, 'results', markdown]);
  }
  for (const [page, name, text] of pages) {
    await writeFile(page, spliceResults(await readFile(page, 'utf8').catch(() => ''), text, name));
    // The repository lints Markdown with Biome: leave the page as `biome format` would.
    spawnSync(join(REPO_ROOT, 'node_modules/.bin/biome'), ['format', '--write', page], {
      stdio: 'ignore',
    });
    process.stdout.write(`Tables written to ${page}\n`);
  }
}
process.stdout.write(`Total ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
const failed = [...report.scenarios, ...startup].filter((s) => s.exitCode !== 0);
if (failed.length) {
  process.stderr.write(
    `${failed.length} run(s) exited non-zero: ${failed.map((s) => s.name).join('; ')}\n`,
  );
  process.exitCode = 1;
}
