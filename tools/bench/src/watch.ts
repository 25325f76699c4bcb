/**
 * `node tools/bench/src/watch.ts [--small] [--latency MS] [--idle-seconds S] [--edits N]
 *   [--heap-mib MIB] [--out FILE]`
 *
 * Watch mode against the polling loop, `run-integration` (the real bin) with
 * openshift-resources over a generated tree and simulated clusters in the
 * steady state (default 20 × 50 × 50 @50 ms):
 * - requests per idle minute after the first iteration (watch: measured;
 *   polling: one run's requests every SLEEP_DURATION_SECS);
 * - drift reaction: N edits by another client, one after the other, each
 *   timed at the simulated server from the edit being stored to our fix being
 *   stored (polling: a drift waits for the next run, half the sleep on average);
 * - peak RSS (VmHWM) of the process, caches full.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { fieldManagerFor } from '@qontract/openshift';
import { clusterState, Workload } from './cluster-state.ts';
import { NO_DRIFT } from './drift.ts';
import { createScaleEnvironment, type ScaleEnvironment } from './environment.ts';
import { clusterName, namespaceName, resourceName, type Scale, scaleLabel } from './model.ts';
import { SMALL_SCALE } from './scenarios.ts';
import { REPO_ROOT } from './tree.ts';

const RUN_INTEGRATION = join(REPO_ROOT, 'packages/cli/bin/run-integration.js');
const INTEGRATION = 'openshift-resources';
/** The loop's default sleep (SLEEP_DURATION_SECS): the polling loop's period, watch mode's resync. */
const PERIOD_SECONDS = 600;

/** What one watch-mode measurement uses. */
export interface WatchBenchOptions {
  readonly small?: boolean;
  readonly latencyMs?: number;
  readonly idleSeconds?: number;
  readonly edits?: number;
  /** QONTRACT_MAX_OLD_SPACE_MB of both processes (the heap a pod's memory limit gives). */
  readonly heapMiB?: number | undefined;
  readonly out?: string | undefined;
  readonly progress?: (line: string) => void;
}

interface Settings {
  readonly scale: Scale;
  readonly latencyMs: number;
  readonly idleSeconds: number;
  readonly edits: number;
  readonly heapMiB: number | undefined;
}

interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves with the first log line whose message starts with `prefix`. */
  waitFor(test: (line: { msg?: string; summary?: unknown }) => boolean): Promise<void>;
  stop(): Promise<void>;
}

function startLoop(env: ScaleEnvironment, watch: boolean, settings: Settings): Child {
  const child = spawn(process.execPath, [RUN_INTEGRATION], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      INTEGRATION_NAME: INTEGRATION,
      INTEGRATION_EXTRA_ARGS: '--thread-pool-size 10 --no-validate-schemas',
      CONFIG: env.configPath,
      DRY_RUN: '--no-dry-run',
      SLEEP_DURATION_SECS: String(PERIOD_SECONDS),
      PROMETHEUS_PORT: '0',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'INFO',
      ...(watch ? { WATCH: 'true' } : {}),
      ...(settings.heapMiB ? { QONTRACT_MAX_OLD_SPACE_MB: String(settings.heapMiB) } : {}),
    },
  });
  if (child.pid === undefined) throw new Error(`could not start ${RUN_INTEGRATION}`);
  const waiters: Array<{ test: (l: { msg?: string }) => boolean; resolve: () => void }> = [];
  let pending = '';
  let tail = '';
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  // What fails before the log exists (Node's own messages) goes to stderr.
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  // run-integration logs to stdout, as the original's run_integration.py.
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      let line: { msg?: string; summary?: unknown };
      try {
        line = JSON.parse(text) as typeof line;
      } catch {
        continue;
      }
      for (const w of waiters.splice(0)) {
        if (w.test(line)) w.resolve();
        else waiters.push(w);
      }
    }
  });
  return {
    process: child,
    pid: child.pid,
    waitFor: (test) =>
      Promise.race([
        new Promise<void>((resolve) => waiters.push({ test, resolve })),
        exited.then(() => {
          throw new Error(`run-integration exited early: ${tail}`);
        }),
      ]),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function peakRss(pid: number): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(text)?.[1]) * 1024;
}

function byVerb(fake: FakeKubeApiServer): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of fake.requestLog) out[e.verb] = (out[e.verb] ?? 0) + 1;
  return out;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A merge patch by another client ("bench-editor"), as `kubectl edit` would send. */
function edit(fake: FakeKubeApiServer, cluster: string, ns: string, name: string, value: string) {
  const c = fake.cluster(cluster);
  const body = JSON.stringify({ data: { LOG_LEVEL: value } });
  return new Promise<void>((resolve, reject) => {
    request(
      new URL(`/api/v1/namespaces/${ns}/configmaps/${name}?fieldManager=bench-editor`, c.url),
      {
        method: 'PATCH',
        ca: c.caCertificate,
        agent: false,
        headers: {
          Authorization: `Bearer ${c.token}`,
          'Content-Type': 'application/merge-patch+json',
        },
      },
      (res) => {
        res
          .resume()
          .on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`edit: HTTP ${res.statusCode}`)),
          );
      },
    )
      .on('error', reject)
      .end(body);
  });
}

/** Edits ConfigMaps one at a time and times each fix at the server. */
async function driftReactions(
  fake: FakeKubeApiServer,
  { edits, scale }: Settings,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < edits; i++) {
    const cluster = clusterName(i % scale.clusters);
    const ns = namespaceName((i * 7) % scale.namespaces);
    // Resources 0, 1, 2 of every five are ConfigMaps.
    const name = resourceName(5 * (i % Math.max(1, Math.floor(scale.resources / 5))) + (i % 3));
    const marker = `edited-${i}`;
    let editedAt: number | undefined;
    const fixed = new Promise<number>((resolve) => {
      const unsubscribe = fake.cluster(cluster).state.store.subscribe((event) => {
        if (event.resource !== '/configmaps' || event.object.name !== name) return;
        if (event.object.namespace !== ns) return;
        const edited = event.object.json.includes(`"${marker}"`);
        if (edited) editedAt = performance.now();
        else if (editedAt !== undefined) {
          unsubscribe();
          resolve(performance.now() - editedAt);
        }
      });
    });
    await edit(fake, cluster, ns, name, marker);
    const ms = await Promise.race([
      fixed,
      new Promise<number>((resolve) => setTimeout(() => resolve(Number.NaN), 30_000)),
    ]);
    latencies.push(ms);
  }
  return latencies;
}

/** Measures the polling loop, then watch mode, on one generated tree; writes and returns the result. */
export async function runWatchBench(options: WatchBenchOptions = {}) {
  const settings: Settings = {
    scale: options.small ? SMALL_SCALE : { clusters: 20, namespaces: 50, resources: 50 },
    latencyMs: options.latencyMs ?? 50,
    idleSeconds: options.idleSeconds ?? 60,
    edits: options.edits ?? 100,
    heapMiB: options.heapMiB,
  };
  const { scale, latencyMs, idleSeconds, edits } = settings;
  const progress = options.progress ?? (() => {});
  progress(`generating the ${scaleLabel(scale)} tree and its GraphQL server`);
  const env = await createScaleEnvironment(scale);
  try {
    const fake = await env.startClusters(latencyMs);
    try {
      const state = clusterState(Workload.resources, scale, NO_DRIFT);
      const manager = fieldManagerFor(INTEGRATION);
      for (const [cluster, list] of state.objects) fake.seed(cluster, list, { manager });

      // The polling loop: one run's requests every period.
      fake.resetLog();
      const polling = startLoop(env, false, settings);
      let pollStarted = performance.now();
      await polling.waitFor((l) => l.summary !== undefined);
      const pollRunSeconds = (performance.now() - pollStarted) / 1000;
      const pollRss = peakRss(polling.pid);
      const pollRequests = byVerb(fake);
      await polling.stop();
      progress(`polling: one run ${pollRunSeconds.toFixed(1)} s, ${JSON.stringify(pollRequests)}`);

      // Watch mode.
      fake.resetLog();
      pollStarted = performance.now();
      const watching = startLoop(env, true, settings);
      try {
        let cachesLine = '';
        await watching.waitFor((l) => {
          if (typeof l.msg !== 'string' || !l.msg.startsWith('watching ')) return false;
          cachesLine = l.msg;
          return true;
        });
        const firstSeconds = (performance.now() - pollStarted) / 1000;
        const firstRequests = byVerb(fake);
        const rssCachesFull = peakRss(watching.pid);
        progress(
          `watch: first iteration ${firstSeconds.toFixed(1)} s, ${JSON.stringify(firstRequests)}`,
        );
        fake.resetLog();
        await new Promise((r) => setTimeout(r, idleSeconds * 1000));
        const idle = byVerb(fake);
        const perMinute = Object.fromEntries(
          Object.entries(idle).map(([verb, n]) => [verb, (n * 60) / idleSeconds]),
        );
        progress(`watch: idle ${idleSeconds} s: ${JSON.stringify(idle)}`);
        const reactions = await driftReactions(fake, settings);
        const measured = reactions.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
        const result = {
          scale: scaleLabel(scale),
          latencyMs,
          periodSeconds: PERIOD_SECONDS,
          heapMiB: settings.heapMiB ?? null,
          loadAverage: loadavg()[0],
          polling: {
            runSeconds: pollRunSeconds,
            requestsPerRun: pollRequests,
            requestsPerIdleMinute: Object.fromEntries(
              Object.entries(pollRequests).map(([v, n]) => [v, (n * 60) / PERIOD_SECONDS]),
            ),
            driftReactionP50Seconds: 0.5 * PERIOD_SECONDS + pollRunSeconds,
            driftReactionP99Seconds: 0.99 * PERIOD_SECONDS + pollRunSeconds,
            peakRssMiB: pollRss / 2 ** 20,
          },
          watch: {
            firstIterationSeconds: firstSeconds,
            firstIterationRequests: firstRequests,
            caches: cachesLine,
            idleSeconds,
            requestsPerIdleMinute: perMinute,
            // Each watch is renewed after 5-10 minutes (7.5 on average); each resync (a new run
            // every period) checks reachability and discovers the API again: no list.
            expectedRequestsPerMinute: {
              watch: (firstRequests.watch ?? 0) / 7.5,
              other: ((firstRequests.other ?? 0) * 60) / PERIOD_SECONDS,
              discovery: ((firstRequests.discovery ?? 0) * 60) / PERIOD_SECONDS,
              list: 0,
            },
            edits,
            reverted: measured.length,
            driftReactionP50Ms: percentile(measured, 50),
            driftReactionP99Ms: percentile(measured, 99),
            peakRssMiBCachesFull: rssCachesFull / 2 ** 20,
            peakRssMiB: peakRss(watching.pid) / 2 ** 20,
          },
        };
        const out =
          options.out ??
          join(REPO_ROOT, 'tools/bench/results', options.small ? 'watch-small.json' : 'watch.json');
        await mkdir(dirname(out), { recursive: true });
        await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
        progress(`JSON report: ${out}`);
        return result;
      } finally {
        await watching.stop();
      }
    } finally {
      await fake.close();
    }
  } finally {
    await env.close();
  }
}

export type WatchBenchResult = Awaited<ReturnType<typeof runWatchBench>>;

/** The command line of `node tools/bench/src/watch.ts`. */
function parseWatchArgs() {
  return parseArgs({
    options: {
      small: { type: 'boolean', default: false },
      latency: { type: 'string', default: '50' },
      'idle-seconds': { type: 'string', default: '60' },
      edits: { type: 'string', default: '100' },
      'heap-mib': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
}

/** The markdown rows of a watch-mode measurement, beside the polling loop. */
export function watchMarkdown(r: WatchBenchResult): string[] {
  const perMinute = (m: Record<string, number>) =>
    Object.entries(m)
      .filter(([, n]) => n > 0)
      .map(([verb, n]) => `${verb} ${n.toFixed(1)}`)
      .join(', ') || '0';
  return [
    `| watch mode (${r.scale} @${r.latencyMs}ms) | polling loop | watch mode |`,
    '| --- | --- | --- |',
    `| requests per idle minute | ${perMinute(r.polling.requestsPerIdleMinute)} | ${perMinute(r.watch.requestsPerIdleMinute)} |`,
    `| drift reaction p50 / p99 | ${r.polling.driftReactionP50Seconds.toFixed(0)} s / ${r.polling.driftReactionP99Seconds.toFixed(0)} s (the next run) | ${r.watch.driftReactionP50Ms.toFixed(0)} ms / ${r.watch.driftReactionP99Ms.toFixed(0)} ms (${r.watch.reverted}/${r.watch.edits} reverted) |`,
    `| peak RSS MiB | ${r.polling.peakRssMiB.toFixed(0)} | ${r.watch.peakRssMiB.toFixed(0)} |`,
  ];
}

const WATCH_USAGE = `Usage: node tools/bench/src/watch.ts [OPTIONS]

Watch mode (WATCH=true) beside the polling loop against simulated clusters:
requests per idle minute, drift reaction p50 / p99, peak RSS.

Options:
  --small            2 × 3 × 5 instead of 20 × 50 × 50
  --latency MS       latency injected at the simulated servers (default 50)
  --idle-seconds N   how long the idle requests are counted (default 60)
  --edits N          hand edits whose reaction is timed (default 100)
  --heap-mib N       QONTRACT_MAX_OLD_SPACE_MB of both runs (the heap a pod would get)
  --out FILE         also write the JSON result there
  -h, --help         this text
`;

if (import.meta.main) {
  let values: ReturnType<typeof parseWatchArgs>;
  try {
    values = parseWatchArgs();
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n\n${WATCH_USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(WATCH_USAGE);
    process.exit(0);
  }
  const result = await runWatchBench({
    small: values.small,
    latencyMs: Number(values.latency),
    idleSeconds: Number(values['idle-seconds']),
    edits: Number(values.edits),
    heapMiB: values['heap-mib'] ? Number(values['heap-mib']) : undefined,
    out: values.out,
    progress: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n${watchMarkdown(result).join('\n')}\n`);
}
