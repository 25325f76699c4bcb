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
 * packages/qontract-reconcile (what the container image runs).
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
}

const BINS = {
  source: join(REPO_ROOT, 'packages/cli/bin/qontract-reconcile.js'),
  bundle: join(REPO_ROOT, 'packages/qontract-reconcile/bundle/qontract-reconcile.mjs'),
} as const;
const BUILD_BUNDLE = join(REPO_ROOT, 'packages/qontract-reconcile/src/build-bundle.ts');

/** An app-interface with nothing to do for openshift-namespaces once its namespaces exist. */
const TRIVIAL_SCALE = { clusters: 2, namespaces: 3, resources: 5 };

/**
 * Preloaded into every measured process: at exit it writes the process's CPU
 * time and peak RSS to the file named by QR_STARTUP_PROBE. The peak is node's
 * own (VmHWM of its memory map): getrusage's maxRSS also keeps the peak of the
 * memory map the process had before exec, which for a bin started through
 * `env` can be the benchmark's own.
 */
const PROBE = `data:text/javascript,${encodeURIComponent(
  "import { readFileSync, writeFileSync } from 'node:fs'; process.on('exit', () => { const u = process.resourceUsage(); let hwm; try { hwm = Number(/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]); } catch {} writeFileSync(process.env.QR_STARTUP_PROBE, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: hwm || u.maxRSS })); });",
)}`;

const COMMANDS = ['--help', 'dry-run openshift-namespaces (nothing to do)'] as const;

function startupName(command: string, variant: 'source' | 'bundle'): string {
  return `startup qontract-reconcile ${command} (${variant})`;
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
    const argsOf = (command: (typeof COMMANDS)[number], dryRun = true) =>
      command === '--help'
        ? ['--help']
        : [
            '--config',
            env.configPath,
            dryRun ? '--dry-run' : '--no-dry-run',
            'openshift-namespaces',
            // The generated tree has no integrations_v1 entries to validate against.
            '--no-validate-schemas',
          ];
    // One wet run creates the namespaces: the measured dry-runs then find nothing to do.
    const setup = await timedRun(BINS.source, argsOf(COMMANDS[1], false));
    if (setup.code !== 0) throw new Error(`the set-up run exited ${setup.code}`);

    const results: StartupMeasurement[] = [];
    for (const command of wanted) {
      const times = { source: [] as number[], bundle: [] as number[] };
      const cpu = { source: [] as number[], bundle: [] as number[] };
      const rss = { source: 0, bundle: 0 };
      const codes = { source: 0, bundle: 0 };
      const loadAverage = loadavg()[0] ?? 0;
      // One untimed run each warms the page cache.
      for (const variant of ['source', 'bundle'] as const)
        await timedRun(BINS[variant], argsOf(command));
      for (let i = 0; i < options.runs; i++) {
        for (const variant of ['source', 'bundle'] as const) {
          const run = await timedRun(BINS[variant], argsOf(command));
          times[variant].push(run.ms);
          cpu[variant].push(run.cpuMs);
          rss[variant] = Math.max(rss[variant], run.maxRssKiB / 1024);
          if (codes[variant] === 0) codes[variant] = run.code;
        }
      }
      for (const variant of ['source', 'bundle'] as const) {
        const sorted = [...times[variant]].sort((a, b) => a - b);
        const m: StartupMeasurement = {
          name: startupName(command, variant),
          command:
            command === '--help'
              ? 'qontract-reconcile --help'
              : 'qontract-reconcile --dry-run openshift-namespaces (nothing to do)',
          variant,
          runs: sorted.length,
          medianMs: median(sorted),
          minMs: sorted[0] ?? 0,
          maxMs: sorted.at(-1) ?? 0,
          medianCpuMs: median(cpu[variant]),
          peakRssMiB: rss[variant],
          exitCode: codes[variant],
          loadAverage,
        };
        results.push(m);
        options.progress?.(
          `${m.name}: median ${m.medianMs.toFixed(0)} ms (CPU ${m.medianCpuMs.toFixed(0)} ms), min ${m.minMs.toFixed(0)} ms, exit ${m.exitCode}`,
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
): Promise<{ ms: number; code: number; cpuMs: number; maxRssKiB: number }> {
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
  };
  return { ms, code, cpuMs: usage.cpuMs ?? 0, maxRssKiB: usage.maxRssKiB ?? 0 };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** The start-up table: source against bundle per command. */
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
  return `${lines.join('\n')}\n`;
}
