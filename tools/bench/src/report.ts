import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import type { Workload } from './cluster-state.ts';
import { type GithubResult, githubScaleLabel } from './github.ts';
import type { LowerBound } from './lower-bound.ts';
import type { InFlightSummary } from './measure.ts';
import { type Scale, scaleLabel } from './model.ts';
import { type SaasResult, saasScaleLabel } from './saas.ts';
import type { TriggerResult } from './triggers.ts';

export interface MachineInfo {
  readonly date: string;
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryBytes: number;
  readonly node: string;
  readonly platform: string;
}

interface Common {
  readonly name: string;
  readonly wallMs: number;
  /** User + system CPU of the measured process. */
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  readonly exitCode: number;
  readonly errorLogLines?: number;
  /** The machine's 1-minute load average when the run started. */
  readonly loadAverage: number;
}

export type ScenarioResult = Common &
  (
    | GithubResult
    | SaasResult
    | TriggerResult
    | {
        readonly kind: 'integration';
        readonly workload: Workload;
        readonly integration: string;
        readonly scale: Scale;
        readonly drift: number;
        readonly driftedObjects: number;
        readonly objects: number;
        readonly dryRun: boolean;
        readonly latencyMs: number;
        readonly concurrency: number;
        readonly requests: {
          readonly total: number;
          readonly byVerb: Readonly<Record<string, number>>;
          readonly byCluster: Readonly<Record<string, Readonly<Record<string, number>>>>;
        };
        /**
         * Where the wall time went: GraphQL requests (summed), start until the
         * first API request, first API request until the last response, and
         * the rest (planning after the last list in a dry run).
         */
        readonly phases: {
          readonly graphqlMs: number;
          readonly beforeApiMs: number;
          readonly apiPhaseMs: number;
          readonly afterApiMs: number;
        };
        /** TCP connections the run opened (API servers and GraphQL). */
        readonly connections: number;
        /** Mutating requests that reached the clusters. */
        readonly writes: number;
        readonly expectedWrites: number;
        readonly lowerBound: LowerBound;
        /** The same bound with one list per namespace and kind, as the original fetches. */
        readonly perNamespaceLowerBound: LowerBound;
        /** Measured wall time ÷ lower bound. */
        readonly ratio: number | null;
      }
    | {
        readonly kind: 'compute';
        /** Canonicalise + sha256 + three-way compare, per CPU second. */
        readonly objectsPerSecond: number;
        /** Parsing the same objects' block-YAML resource files (parseResource), per CPU second. */
        readonly yamlObjectsPerSecond: number;
      }
    | {
        readonly kind: 'connections';
        readonly requests: number;
        /** TCP connections opened, the warm-up request's included. */
        readonly connections: number;
        /** Wall and CPU time of the requests after the warm-up. */
        readonly requestsWallMs: number;
        readonly requestsCpuMs: number;
      }
    | {
        readonly kind: 'embedded-load';
        readonly scale: Scale;
        readonly files: number;
        readonly loadMs: number;
      }
    | { readonly kind: 'remote-query'; readonly scale: Scale; readonly files: number }
    | {
        readonly kind: 'loop';
        readonly workload: Workload;
        readonly integration: string;
        readonly scale: Scale;
        readonly iterations: number;
        readonly latencyMs: number;
        /** The container memory limit emulated; absent: Node's default heap. */
        readonly memoryLimitMiB?: number;
        /** The `--max-old-space-size` the process ran with, if any. */
        readonly heapFlag: string | null;
        /** RSS right after each run. */
        readonly rssBytes: readonly number[];
        /** Duration of each run. */
        readonly runSeconds: readonly number[];
        /** CPU time of each run (the first includes module loading). */
        readonly runCpuMs: readonly number[];
        /** 'cold-warm': the loop-mode scenario (first run cold, the others warm). */
        readonly mode?: 'rss' | 'cold-warm';
        /** The loop ran with the desired cache off (the comparison). */
        readonly desiredCacheOff?: boolean;
        /** The loop ran as an operator: later runs read the clusters from watch caches. */
        readonly watchCaches?: boolean;
        /** The lower bound of one steady dry-run of the scenario's workload. */
        readonly lowerBound?: LowerBound;
        /** Open file descriptors (sockets included) after each run. */
        readonly openFds: readonly number[];
        /** API requests of all the runs. */
        readonly requests: number;
      }
  );

export interface SuiteReport {
  readonly suite: string;
  readonly machine: MachineInfo;
  readonly scenarios: readonly ScenarioResult[];
}

export function machineInfo(date: Date): MachineInfo {
  let nproc = cpus().length;
  try {
    // nproc honours the CPU affinity and cgroup limits the benchmark really ran under.
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc;
  } catch {
    // no coreutils: the OS count will do
  }
  return {
    date: date.toISOString(),
    nproc,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);
const mib = (bytes: number) => String(Math.round(bytes / 2 ** 20));

/** Which suite ran where and when: the first line of each report. */
function machineLine(report: SuiteReport): string {
  const m = report.machine;
  return (
    `Suite \`${report.suite}\`, run ${m.date.slice(0, 16).replace('T', ' ')} UTC on ${m.nproc} CPUs ` +
    `(${m.cpuModel}), ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB RAM, Node ${m.node}, ${m.platform}.`
  );
}

/**
 * The headline of the results (docs/benchmarks.md): the machine and where the
 * run stands against the targets. Every row of every scenario is in
 * markdownReport, which goes to the history page.
 */
export function headlineMarkdown(report: SuiteReport): string {
  return `${[machineLine(report), '', ...targetLines(report)].join('\n')}\n`;
}

/** The results as markdown: the machine, the integration runs, the other measurements, the targets. */
export function markdownReport(report: SuiteReport): string {
  const lines: string[] = [
    machineLine(report),
    '',
    '| scenario | scale | wall s | before API / API / after s | CPU s | peak RSS MiB | requests (list/get/write/other) | connections | writes (expected) | lower bound s | ratio | per-namespace bound s | load |',
    '| --- | --- | --: | --- | --: | --: | --- | --: | --: | --: | --: | --: | --: |',
  ];
  for (const r of report.scenarios) {
    if (r.kind !== 'integration') continue;
    const v = r.requests.byVerb;
    const writesVerbs = ['create', 'update', 'patch', 'apply', 'delete', 'deletecollection'];
    const w = writesVerbs.reduce((n, k) => n + (v[k] ?? 0), 0);
    const other = r.requests.total - (v.list ?? 0) - (v.get ?? 0) - w;
    lines.push(
      `| ${r.name}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | ${scaleLabel(r.scale)} | ${seconds(r.wallMs)} | ` +
        `${seconds(r.phases.beforeApiMs)} / ${seconds(r.phases.apiPhaseMs)} / ${seconds(r.phases.afterApiMs)} | ${seconds(r.cpuMs)} | ${mib(r.peakRssBytes)} | ` +
        `${r.requests.total} (${v.list ?? 0}/${v.get ?? 0}/${w}/${other}) | ${r.connections} | ${r.writes} (${r.expectedWrites}) | ` +
        `${seconds(r.lowerBound.ms)} | ${r.ratio === null ? '–' : r.ratio.toFixed(2)} | ${seconds(r.perNamespaceLowerBound.ms)} | ${r.loadAverage.toFixed(1)} |`,
    );
  }
  lines.push(
    '',
    '| measurement | result | wall s | CPU s | peak RSS MiB | load |',
    '| --- | --- | --: | --: | --: | --: |',
  );
  for (const r of report.scenarios) {
    let result: string;
    if (r.kind === 'compute')
      result =
        `hash + compare ${r.objectsPerSecond.toLocaleString('en-US')} objects/s; ` +
        `YAML parse of resource files ${r.yamlObjectsPerSecond.toLocaleString('en-US')} files/s (one core)`;
    else if (r.kind === 'embedded-load')
      result = `${r.files.toLocaleString('en-US')} files (${scaleLabel(r.scale)}) loaded in ${seconds(r.loadMs)} s`;
    else if (r.kind === 'connections')
      result = `${r.requests} requests over ${r.connections} TCP connections in ${seconds(r.requestsWallMs)} s, ${((1000 * r.requestsCpuMs) / r.requests).toFixed(0)} µs CPU per request`;
    else if (r.kind === 'remote-query')
      result = `openshift-resources query over HTTP, ${r.files.toLocaleString('en-US')}-file tree`;
    else continue;
    lines.push(
      `| ${r.name} | ${result} | ${seconds(r.wallMs)} | ${seconds(r.cpuMs)} | ${mib(r.peakRssBytes)} |`,
    );
  }
  const githubRuns = report.scenarios.filter(
    (r): r is Extract<ScenarioResult, { kind: 'github' }> => r.kind === 'github',
  );
  if (githubRuns.length) {
    lines.push(
      '',
      '| github scenario | scale | wall s | CPU s | peak RSS MiB | reads (bound) | writes (expected) | in flight: peak / mean | lower bound s | ratio | load |',
      '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
    );
    for (const r of githubRuns) {
      lines.push(
        `| ${r.name}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | ${githubScaleLabel(r.scale)} | ${seconds(r.wallMs)} | ${seconds(r.cpuMs)} | ${mib(r.peakRssBytes)} | ` +
          `${r.reads} (${r.lowerBound.reads}) | ${r.writes} (${r.expectedWrites}) | ${inFlightCell(r.inFlight)} | ${seconds(r.lowerBound.ms)} | ${r.ratio === null ? '–' : r.ratio.toFixed(2)} | ${r.loadAverage.toFixed(1)} |`,
      );
    }
  }
  const saasRuns = report.scenarios.filter(
    (r): r is Extract<ScenarioResult, { kind: 'saas' }> => r.kind === 'saas',
  );
  if (saasRuns.length) {
    lines.push(
      '',
      '| saas scenario | scale | wall s | CPU s | peak RSS MiB | GitHub commits (bound) | GitHub files (bound) | manifests (bound) | writes | in flight, GitHub / registry / clusters: peak / mean | lower bound s | ratio | load |',
      '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
    );
    for (const r of saasRuns) {
      lines.push(
        `| ${r.name}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | ${saasScaleLabel(r.scale)} | ${seconds(r.wallMs)} | ${seconds(r.cpuMs)} | ${mib(r.peakRssBytes)} | ` +
          `${r.github.commits} (${r.lowerBound.commits}) | ${r.github.contents} (${r.lowerBound.contents}) | ${r.manifests} (${r.lowerBound.manifests}) | ${r.writes} | ${[r.inFlight.github, r.inFlight.registry, r.inFlight.clusters].map(inFlightCell).join(' · ')} | ${seconds(r.lowerBound.ms)} | ${r.ratio === null ? '–' : r.ratio.toFixed(2)} | ${r.loadAverage.toFixed(1)} |`,
      );
    }
  }
  lines.push(...triggerLines(report));
  const allLoops = report.scenarios.filter(
    (r): r is Extract<ScenarioResult, { kind: 'loop' }> => r.kind === 'loop',
  );
  for (const r of allLoops.filter((x) => x.mode === 'cold-warm'))
    lines.push('', ...loopModeLines(r));
  lines.push(...scalingLines(allLoops));
  const loops = allLoops.filter((x) => x.mode !== 'cold-warm');
  if (loops.length) {
    lines.push(
      '',
      '| run-integration loop | scale | heap flag | RSS after run 1 / max / last MiB | peak RSS MiB | open fds after run 1 / last | run s (first / median / last) | CPU s | load |',
      '| --- | --- | --- | --: | --: | --: | --: | --: | --: |',
    );
    for (const r of loops) {
      const rss = loopRss(r);
      const runs = [...r.runSeconds].sort((a, b) => a - b);
      const median = runs[Math.floor(runs.length / 2)] ?? 0;
      lines.push(
        `| ${r.name}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | ${scaleLabel(r.scale)} | ${r.heapFlag === null ? 'none' : `\`${r.heapFlag}\``} | ` +
          `${rss.first} / ${rss.max} / ${rss.last} | ${mib(r.peakRssBytes)} | ${r.openFds[0] ?? 0} / ${r.openFds.at(-1) ?? 0} | ` +
          `${(r.runSeconds[0] ?? 0).toFixed(2)} / ${median.toFixed(2)} / ${(r.runSeconds.at(-1) ?? 0).toFixed(2)} | ${seconds(r.cpuMs)} | ${r.loadAverage.toFixed(1)} |`,
      );
    }
  }
  lines.push('', ...targetLines(report));
  return `${lines.join('\n')}\n`;
}

/** The trigger scenarios: requests at each peer against the bound's. */
function triggerLines(report: SuiteReport): string[] {
  const runs = report.scenarios.filter(
    (r): r is Extract<ScenarioResult, { kind: 'trigger' }> => r.kind === 'trigger',
  );
  if (!runs.length) return [];
  const lines = [
    '',
    '| trigger scenario | scale | wall s | CPU s | peak RSS MiB | API requests (bound) | GitHub requests (bound) | state requests (bound) | PipelineRuns planned (expected) | writes | lower bound s | ratio | load |',
    '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  for (const r of runs) {
    const b = r.lowerBound;
    lines.push(
      `| ${r.name}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | ${saasScaleLabel(r.scale)} | ${seconds(r.wallMs)} | ${seconds(r.cpuMs)} | ${mib(r.peakRssBytes)} | ` +
        `${r.requests.api} (${b.api}) | ${r.requests.github} (${b.github}) | ${r.requests.state} (${b.state}) | ${r.plannedRuns} (${r.expectedRuns}) | ${r.writes} | ${seconds(b.ms)} | ${r.ratio === null ? '–' : r.ratio.toFixed(2)} | ${r.loadAverage.toFixed(1)} |`,
    );
  }
  return lines;
}

/** The loop-mode scenario: one row per run (the first cold, the others warm) against the bound. */
function loopModeLines(r: Extract<ScenarioResult, { kind: 'loop' }>): string[] {
  const boundMs = r.lowerBound?.ms ?? 0;
  const ratio = (wallMs: number) => (boundMs > 0 ? (wallMs / boundMs).toFixed(2) : '–');
  const lines = [
    `| ${r.name}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | wall s | CPU s | RSS after the run MiB | bound s | ratio |`,
    '| --- | --: | --: | --: | --: | --: |',
  ];
  r.runSeconds.forEach((s, i) => {
    lines.push(
      `| run ${i + 1} (${i === 0 ? 'cold' : 'warm'}) | ${s.toFixed(2)} | ${seconds(r.runCpuMs[i] ?? 0)} | ${mib(r.rssBytes[i] ?? 0)} | ${seconds(boundMs)} | ${ratio(s * 1000)} |`,
    );
  });
  const warm = [...r.runSeconds.slice(1)].sort((a, b) => a - b);
  const median = warm[Math.floor(warm.length / 2)];
  if (median !== undefined) {
    lines.push(
      `| warm median | ${median.toFixed(2)} | | peak ${mib(r.peakRssBytes)} | ${seconds(boundMs)} | ${ratio(median * 1000)} |`,
    );
  }
  lines.push('', `Load average ${r.loadAverage.toFixed(1)} at the start of the scenario.`);
  return lines;
}

/** One scale of the scaling set: what its cold and warm runs cost. */
export interface ScalingPoint {
  readonly run: Extract<ScenarioResult, { kind: 'loop' }>;
  readonly objects: number;
  readonly cold: { readonly wallS: number; readonly cpuMs: number };
  /** The warm run of median wall time; absent when the loop ran once. */
  readonly warmMedian?: { readonly wallS: number; readonly cpuMs: number };
  readonly peakRssMiB: number;
}

/**
 * The loop-mode runs of the scaling set, smallest first (the desired cache on,
 * no watch caches); empty unless they cover at least two scales. Shared by the
 * table and the chart so that both show the same runs.
 */
export function scalingPoints(
  loops: readonly Extract<ScenarioResult, { kind: 'loop' }>[],
): ScalingPoint[] {
  const points = loops
    .filter((r) => r.mode === 'cold-warm' && !r.desiredCacheOff && !r.watchCaches)
    .map((run): ScalingPoint => {
      const warm = run.runSeconds
        .map((wallS, i) => ({ wallS, cpuMs: run.runCpuMs[i] ?? 0 }))
        .slice(1)
        .sort((a, b) => a.wallS - b.wallS);
      const median = warm[Math.floor(warm.length / 2)];
      return {
        run,
        objects: run.scale.clusters * run.scale.namespaces * run.scale.resources,
        cold: { wallS: run.runSeconds[0] ?? 0, cpuMs: run.runCpuMs[0] ?? 0 },
        ...(median ? { warmMedian: median } : {}),
        peakRssMiB: run.peakRssBytes / 2 ** 20,
      };
    })
    .sort((a, b) => a.objects - b.objects);
  return new Set(points.map((p) => p.objects)).size < 2 ? [] : points;
}

/**
 * How cost grows: the loop-mode runs of several scales side by side, each
 * also per object, so that a step (not a straight line) shows. Empty unless
 * the report holds loop-mode runs of at least two scales.
 */
export function scalingLines(
  loops: readonly Extract<ScenarioResult, { kind: 'loop' }>[],
): string[] {
  const points = scalingPoints(loops);
  if (points.length === 0) return [];
  const lines = [
    '',
    '| how cost grows | objects | requests per run | cold: wall / CPU s | warm median: wall / CPU s | peak RSS MiB | cold CPU ms per 1k objects | warm CPU ms per 1k objects | peak RSS MiB per 10k objects | bound s |',
    '| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  for (const { run: r, objects, cold, warmMedian: median, peakRssMiB: rss } of points) {
    const perK = (ms: number) => ((ms / objects) * 1000).toFixed(1);
    lines.push(
      `| ${scaleLabel(r.scale)}${r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ''} | ${objects.toLocaleString('en-US')} | ${Math.round(r.requests / Math.max(1, r.runSeconds.length))} | ` +
        `${cold.wallS.toFixed(2)} / ${seconds(cold.cpuMs)} | ` +
        `${median ? `${median.wallS.toFixed(2)} / ${seconds(median.cpuMs)}` : '–'} | ${rss.toFixed(0)} | ` +
        `${perK(cold.cpuMs)} | ${median ? perK(median.cpuMs) : '–'} | ${((rss / objects) * 10_000).toFixed(1)} | ${seconds(r.lowerBound?.ms ?? 0)} |`,
    );
  }
  lines.push(
    '',
    'The cold run includes starting the process and loading its modules (a fixed cost that weighs most at the smallest scale).',
  );
  return lines;
}

/** RSS after the first run, the largest after any run, and after the last run, in MiB. */
export function loopRss(r: { readonly rssBytes: readonly number[] }): {
  first: string;
  max: string;
  last: string;
} {
  return {
    first: mib(r.rssBytes[0] ?? 0),
    max: mib(Math.max(0, ...r.rssBytes)),
    last: mib(r.rssBytes.at(-1) ?? 0),
  };
}

/** Where the suite stands against the issue's targets (only those its scenarios measure). */
function targetLines(report: SuiteReport): string[] {
  const out = ['| target | measured | met |', '| --- | --- | :-: |'];
  const mark = (ok: boolean) => (ok ? 'yes' : '**no**');
  const runs = report.scenarios.filter(
    (r): r is Extract<ScenarioResult, { kind: 'integration' }> =>
      r.kind === 'integration' && r.workload === 'openshift-resources',
  );
  for (const r of runs.filter((x) => x.drift === 0 && x.dryRun)) {
    const ok = (r.ratio ?? Infinity) <= 1.5 && r.peakRssBytes <= 2 ** 30 && r.writes === 0;
    out.push(
      `| ${r.name.replace(/^openshift-resources /, '')}: ratio ≤ 1.5, RSS ≤ 1 GiB, 0 writes | ratio ${r.ratio?.toFixed(2)}, ${mib(r.peakRssBytes)} MiB, ${r.writes} writes | ${mark(ok)} |`,
    );
  }
  for (const r of runs.filter((x) => x.drift === 0.01 && !x.dryRun)) {
    const ok = (r.ratio ?? Infinity) <= 1.5 && r.writes === r.expectedWrites;
    out.push(
      `| drift 1% wet @${r.latencyMs}ms: one write per drifted object, ratio ≤ 1.5 | ${r.writes} writes for ${r.expectedWrites} drifted, ratio ${r.ratio?.toFixed(2)} | ${mark(ok)} |`,
    );
  }
  for (const r of report.scenarios) {
    if (
      r.kind === 'loop' &&
      r.mode === 'cold-warm' &&
      !r.desiredCacheOff &&
      r.lowerBound &&
      r.lowerBound.ms > 0
    ) {
      const warm = [...r.runSeconds.slice(1)].sort((a, b) => a - b);
      const median = warm[Math.floor(warm.length / 2)] ?? Infinity;
      const ratio = (median * 1000) / r.lowerBound.ms;
      out.push(
        `| loop mode${r.watchCaches ? ' with watch caches' : ''}, warm runs @${r.latencyMs}ms: ratio ≤ 1.5 | median ratio ${ratio.toFixed(2)} (${median.toFixed(2)} s, bound ${seconds(r.lowerBound.ms)} s) | ${mark(ratio <= 1.5)} |`,
      );
    }
    if (r.kind === 'compute') {
      out.push(
        `| hash + compare ≥ 50,000 objects/s per core | ${r.objectsPerSecond.toLocaleString('en-US')} objects/s | ${mark(r.objectsPerSecond >= 50_000)} |`,
      );
    }
    if (r.kind === 'embedded-load') {
      out.push(
        `| embedded engine loads 10,000 files in ≤ 3 s | ${r.files.toLocaleString('en-US')} files in ${seconds(r.loadMs)} s | ${mark(r.files >= 10_000 && r.loadMs <= 3000)} |`,
      );
    }
  }
  return out;
}

/**
 * Replaces a generated part of a page (between `<!-- bench:NAME:start -->` and
 * `<!-- bench:NAME:end -->`), keeping the hand-written text around it; appends
 * the part when the page has no such markers yet.
 */
export function spliceResults(doc: string, markdown: string, name = 'results'): string {
  const startMarker = `<!-- bench:${name}:start -->`;
  const endMarker = `<!-- bench:${name}:end -->`;
  const start = doc.indexOf(startMarker);
  const end = doc.indexOf(endMarker);
  const block = `${startMarker}\n\n${markdown}\n${endMarker}`;
  if (start < 0 || end < start) return `${doc.trimEnd()}\n\n${block}\n`;
  return doc.slice(0, start) + block + doc.slice(end + endMarker.length);
}

/** `peak / mean` requests in flight at a peer (`–` for a result from before they were counted). */
function inFlightCell(f: InFlightSummary | undefined): string {
  return f ? `${f.max} / ${f.mean.toFixed(1)}` : '–';
}
