import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createScaleEnvironment } from './environment.ts';
import { REPO_ROOT } from './tree.ts';

/**
 * Start-up cost of the commands, as a pod or CronJob pays it on every start:
 * the sources (the bins of packages/cli: the launcher, then Node's type
 * stripping of every module) against the esbuild bundle of
 * packages/qontract-reconcile (what the container image runs). The pod's own
 * command, `run-integration` with RUN_ONCE, is measured beside
 * `qontract-reconcile`, with what its peak RSS is made of (`Footprint`).
 */
export interface StartupMeasurement {
  readonly name: string;
  readonly command: string;
  readonly variant: 'source' | 'bundle';
  readonly runs: number;
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** CPU time (user + system) of the process, median over the runs: less swayed by load. */
  readonly medianCpuMs: number;
  readonly peakRssMiB: number;
  /** The first non-zero exit code of the runs, else 0. */
  readonly exitCode: number;
  readonly loadAverage: number;
  /** What the memory of the run with the peak RSS was made of, at its exit. */
  readonly footprint?: Footprint;
}

/**
 * A process's memory at its exit, in MiB (the peak is at or near the exit of
 * these short runs): the V8 heap (committed; the young generation is part of
 * it), external memory (module sources, buffers) and the rest of the resident
 * set (Node's binary and the code pages it touched, the compiler's and
 * OpenSSL's allocations), with the worker threads the run started.
 */
interface Footprint {
  readonly rssMiB: number;
  readonly heapMiB: number;
  readonly youngMiB: number;
  readonly externalMiB: number;
  readonly workers: number;
}

const BINS = {
  source: join(REPO_ROOT, 'packages/cli/bin/qontract-reconcile.js'),
  bundle: join(REPO_ROOT, 'packages/qontract-reconcile/bundle/qontract-reconcile.mjs'),
} as const;
/** The container's command (the image's CMD; the chart sets INTEGRATION_NAME and the rest). */
const POD_BINS = {
  source: join(REPO_ROOT, 'packages/cli/bin/run-integration.js'),
  bundle: join(REPO_ROOT, 'packages/qontract-reconcile/bundle/run-integration.mjs'),
} as const;
const BUILD_BUNDLE = join(REPO_ROOT, 'packages/qontract-reconcile/src/build-bundle.ts');

/** An app-interface with nothing to do for openshift-namespaces once its namespaces exist. */
const TRIVIAL_SCALE = { clusters: 2, namespaces: 3, resources: 5 };

/**
 * Preloaded into every measured process: at exit it writes the process's CPU
 * time, peak RSS and `Footprint` to the file named by QR_STARTUP_PROBE. The
 * peak is node's own (VmHWM of its memory map): getrusage's maxRSS also keeps
 * the peak of the memory map the process had before exec, which for a bin
 * started through `env` can be the benchmark's own.
 */
const PROBE = `data:text/javascript,${encodeURIComponent(
  [
    "import { readFileSync, writeFileSync } from 'node:fs';",
    "import { getHeapSpaceStatistics } from 'node:v8';",
    "let workers = 0; process.on('worker', () => { workers++; });",
    "process.on('exit', () => {",
    '  const u = process.resourceUsage(); const m = process.memoryUsage(); let hwm;',
    "  try { hwm = Number(/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]); } catch {}",
    "  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;",
    '  writeFileSync(process.env.QR_STARTUP_PROBE, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: hwm || u.maxRSS,',
    '    rss: m.rss, heap: m.heapTotal, young, external: m.external, workers }));',
    '});',
  ].join('\n'),
)}`;

/** The commands measured: what each shows in the table, its bins and how it is started. */
interface StartupCommand {
  readonly key: string;
  readonly label: string;
  readonly bins: { readonly source: string; readonly bundle: string };
  /** Its arguments and environment for a config (`dryRun`: false for the set-up run). */
  readonly start: (configPath: string, dryRun: boolean) => { args: string[]; env: Env };
}

type Env = Readonly<Record<string, string>>;

const NAMESPACES_ARGS = (configPath: string, dryRun: boolean) => [
  '--config',
  configPath,
  dryRun ? '--dry-run' : '--no-dry-run',
  'openshift-namespaces',
  // The generated tree has no integrations_v1 entries to validate against.
  '--no-validate-schemas',
];

const COMMANDS: readonly StartupCommand[] = [
  {
    key: '--help',
    label: 'qontract-reconcile --help',
    bins: BINS,
    start: () => ({ args: ['--help'], env: {} }),
  },
  {
    key: 'dry-run openshift-namespaces (nothing to do)',
    label: 'qontract-reconcile --dry-run openshift-namespaces (nothing to do)',
    bins: BINS,
    start: (configPath, dryRun) => ({ args: NAMESPACES_ARGS(configPath, dryRun), env: {} }),
  },
  {
    key: 'run-integration RUN_ONCE openshift-namespaces (the pod)',
    label: 'run-integration, RUN_ONCE, DRY_RUN openshift-namespaces (nothing to do): the pod',
    bins: POD_BINS,
    start: (configPath, dryRun) => ({
      args: [],
      env: {
        RUN_ONCE: 'true',
        INTEGRATION_NAME: 'openshift-namespaces',
        DRY_RUN: dryRun ? '--dry-run' : '--no-dry-run',
        CONFIG: configPath,
        INTEGRATION_EXTRA_ARGS: '--no-validate-schemas',
      },
    }),
  },
];

function startupName(command: StartupCommand, variant: 'source' | 'bundle'): string {
  return command.bins === POD_BINS
    ? `startup ${command.key} (${variant})`
    : `startup qontract-reconcile ${command.key} (${variant})`;
}

/**
 * Builds the bundle, then runs each selected command `runs` times per variant,
 * the variants taking turns, each run a fresh process of the Node running this.
 */
export async function runStartupMeasurements(options: {
  readonly runs: number;
  readonly selected: (name: string) => boolean;
  readonly progress?: (line: string) => void;
}): Promise<StartupMeasurement[]> {
  const wanted = COMMANDS.filter((c) =>
    (['source', 'bundle'] as const).some((v) => options.selected(startupName(c, v))),
  );
  if (wanted.length === 0) return [];
  options.progress?.('building the bundle (npm run build:bundle -w @qontract/qontract-reconcile)');
  const build = spawnSync(process.execPath, [BUILD_BUNDLE], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (build.status !== 0) throw new Error(`building the bundle failed:\n${build.stderr}`);

  const env = await createScaleEnvironment(TRIVIAL_SCALE);
  const clusters = await env.startClusters(0);
  try {
    const runOf = (command: StartupCommand, variant: 'source' | 'bundle', dryRun = true) => {
      const { args, env: extra } = command.start(env.configPath, dryRun);
      return timedRun(command.bins[variant], args, extra);
    };
    // One wet run creates the namespaces: the measured dry-runs then find nothing to do.
    const setup = await runOf(COMMANDS[1]!, 'source', false);
    if (setup.code !== 0) throw new Error(`the set-up run exited ${setup.code}`);

    const results: StartupMeasurement[] = [];
    for (const command of wanted) {
      const times = { source: [] as number[], bundle: [] as number[] };
      const cpu = { source: [] as number[], bundle: [] as number[] };
      const rss = { source: 0, bundle: 0 };
      const footprints: { source?: Footprint; bundle?: Footprint } = {};
      const codes = { source: 0, bundle: 0 };
      const loadAverage = loadavg()[0] ?? 0;
      // One untimed run each warms the page cache.
      for (const variant of ['source', 'bundle'] as const) await runOf(command, variant);
      for (let i = 0; i < options.runs; i++) {
        for (const variant of ['source', 'bundle'] as const) {
          const run = await runOf(command, variant);
          times[variant].push(run.ms);
          cpu[variant].push(run.cpuMs);
          if (run.maxRssKiB / 1024 >= rss[variant]) {
            rss[variant] = run.maxRssKiB / 1024;
            if (run.footprint) footprints[variant] = run.footprint;
          }
          if (codes[variant] === 0) codes[variant] = run.code;
        }
      }
      for (const variant of ['source', 'bundle'] as const) {
        const sorted = [...times[variant]].sort((a, b) => a - b);
        const footprint = footprints[variant];
        const m: StartupMeasurement = {
          name: startupName(command, variant),
          command: command.label,
          variant,
          runs: sorted.length,
          medianMs: median(sorted),
          minMs: sorted[0] ?? 0,
          maxMs: sorted.at(-1) ?? 0,
          medianCpuMs: median(cpu[variant]),
          peakRssMiB: rss[variant],
          exitCode: codes[variant],
          loadAverage,
          ...(footprint ? { footprint } : {}),
        };
        results.push(m);
        options.progress?.(
          `${m.name}: median ${m.medianMs.toFixed(0)} ms (CPU ${m.medianCpuMs.toFixed(0)} ms), min ${m.minMs.toFixed(0)} ms, peak RSS ${m.peakRssMiB.toFixed(0)} MiB, exit ${m.exitCode}`,
        );
      }
    }
    return results.filter((r) => options.selected(r.name));
  } finally {
    await clusters.close();
    await env.close();
    if (probeDir) await rm(probeDir, { recursive: true, force: true });
    probeDir = undefined;
  }
}

let probeDir: string | undefined;

async function timedRun(
  bin: string,
  args: readonly string[],
  extraEnv: Env,
): Promise<{ ms: number; code: number; cpuMs: number; maxRssKiB: number; footprint?: Footprint }> {
  probeDir ??= await mkdtemp(join(tmpdir(), 'qr-startup-'));
  const probe = join(probeDir, 'probe.json');
  await rm(probe, { force: true });
  const started = performance.now();
  // The bin itself, as a user or a pod starts it: its first line starts the
  // `node` found first on PATH (this Node 24) with the collector's flags.
  const child = spawn(bin, args, {
    stdio: 'ignore',
    env: {
      ...process.env,
      ...extraEnv,
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
      NODE_OPTIONS: `--import ${PROBE}`,
      LOG_FORMAT: 'json',
      QR_STARTUP_PROBE: probe,
    },
  });
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  const ms = performance.now() - started;
  const usage = JSON.parse(await readFile(probe, 'utf8').catch(() => '{}')) as {
    cpuMs?: number;
    maxRssKiB?: number;
    rss?: number;
    heap?: number;
    young?: number;
    external?: number;
    workers?: number;
  };
  const mib = (bytes = 0) => bytes / 2 ** 20;
  const footprint =
    usage.rss === undefined
      ? undefined
      : {
          rssMiB: mib(usage.rss),
          heapMiB: mib(usage.heap),
          youngMiB: mib(usage.young),
          externalMiB: mib(usage.external),
          workers: usage.workers ?? 0,
        };
  return {
    ms,
    code,
    cpuMs: usage.cpuMs ?? 0,
    maxRssKiB: usage.maxRssKiB ?? 0,
    ...(footprint ? { footprint } : {}),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * The original's peak RSS for the pod's small run (`run-integration` of a
 * small app-interface against the same fakes), as the author of issue 41
 * measured it: the Python original cannot run here (PyPI is out of reach).
 */
const ORIGINAL_SMALL_RUN_MIB = '106–134';

/**
 * The start-up table (source against bundle per command), then what the
 * bundle's peak RSS is made of, the original's figure beside the pod's run.
 */
export function startupMarkdown(results: readonly StartupMeasurement[]): string {
  if (results.length === 0) return '';
  const lines = [
    '| command (fresh process, Node 24) | variant | runs | wall ms median (min–max) | CPU ms median | peak RSS MiB | exit | load |',
    '| --- | --- | --: | --- | --: | --: | --: | --: |',
  ];
  for (const r of results) {
    lines.push(
      `| \`${r.command}\` | ${r.variant} | ${r.runs} | ${r.medianMs.toFixed(0)} (${r.minMs.toFixed(0)}–${r.maxMs.toFixed(0)}) | ${r.medianCpuMs.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} | ${r.exitCode} | ${r.loadAverage.toFixed(1)} |`,
    );
  }
  const bundled = results.filter((r) => r.variant === 'bundle' && r.footprint);
  if (bundled.length > 0) {
    lines.push(
      '',
      '| bundle: what the peak RSS is made of (MiB, at the exit of the peak run) | peak RSS | V8 heap, committed (young generation) | external (module sources, buffers) | Node and native (binary, code, allocations) | worker threads | the original |',
      '| --- | --: | --: | --: | --: | --: | --: |',
    );
    for (const r of bundled) {
      const f = r.footprint!;
      const rest = f.rssMiB - f.heapMiB - f.externalMiB;
      const original = r.name.includes('(the pod)') ? ORIGINAL_SMALL_RUN_MIB : '';
      lines.push(
        `| \`${r.command}\` | ${r.peakRssMiB.toFixed(0)} | ${f.heapMiB.toFixed(0)} (${f.youngMiB.toFixed(0)}) | ${f.externalMiB.toFixed(0)} | ${rest.toFixed(0)} | ${f.workers} | ${original} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
