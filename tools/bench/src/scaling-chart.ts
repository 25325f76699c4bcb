/**
 * `node tools/bench/src/scaling-chart.ts [REPORT.json] [OUT.svg]`
 *
 * Draws docs/benchmarks-scaling.svg again from a saved report of the scaling
 * set (default tools/bench/results/scaling.json), without running it again:
 * `npm run bench -- --scaling` writes both.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { scalingChartOfReport } from './chart.ts';
import type { SuiteReport } from './report.ts';
import { REPO_ROOT } from './tree.ts';

const [
  input = join(REPO_ROOT, 'tools/bench/results/scaling.json'),
  output = join(REPO_ROOT, 'docs/benchmarks-scaling.svg'),
] = process.argv.slice(2);
let report: SuiteReport;
try {
  report = JSON.parse(await readFile(input, 'utf8')) as SuiteReport;
} catch (e) {
  process.stderr.write(`scaling-chart: cannot read ${input}: ${(e as Error).message}\n`);
  process.exit(2);
}
const svg = scalingChartOfReport(report);
if (!svg) {
  process.stderr.write(
    `scaling-chart: ${input} holds loop-mode runs of fewer than two scales (run npm run bench -- --scaling)\n`,
  );
  process.exit(1);
}
await writeFile(output, svg);
process.stdout.write(`Chart written to ${output}\n`);
