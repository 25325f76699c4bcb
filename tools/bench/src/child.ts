/**
 * One measured run in its own process, so that its CPU time and peak RSS are
 * its own (the simulated clusters and the GraphQL server live in the parent):
 *
 *   node tools/bench/src/child.ts '<ChildTask as JSON>'
 *
 * The last stdout line is `BENCH_RESULT <ChildMeasurement as JSON>`.
 */
import { type ChildTask, runChildTask } from './child-tasks.ts';

const RESULT_PREFIX = 'BENCH_RESULT ';

const task = JSON.parse(process.argv[2] ?? '') as ChildTask;
const measured = await runChildTask(task);
process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(measured)}\n`, () => process.exit(0));
