import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { heapSizeForMemoryLimit } from '@qontract/core/launch';
import { describe, expect, it } from 'vitest';
import { niceMax, scalingChartOfReport, scalingChartSvg } from './chart.ts';
import { Workload } from './cluster-state.ts';
import { chooseDrift } from './drift.ts';
import { lowerBound } from './lower-bound.ts';
import {
  headlineMarkdown,
  markdownReport,
  type ScenarioResult,
  type SuiteReport,
  scalingLines,
  scalingPoints,
  spliceResults,
} from './report.ts';
import { runSuite } from './run-suite.ts';
import {
  LOOP_POD_MEMORY_LIMIT_MIB,
  type Scenario,
  SMALL_SCALE,
  scalingSuite,
  smallSuite,
} from './scenarios.ts';
import { runWatchBench } from './watch.ts';

/** A loop-mode run of the scaling set: `cpuMs` per run, the first cold. */
const loopRun = (clusters: number, cpuMs: number[], rssMiB: number) =>
  ({
    kind: 'loop',
    name: `loop ${clusters}`,
    workload: Workload.resources,
    integration: 'openshift-resources',
    scale: { clusters, namespaces: 10, resources: 10 },
    iterations: cpuMs.length,
    latencyMs: 50,
    heapFlag: null,
    rssBytes: cpuMs.map(() => rssMiB * 2 ** 20),
    runSeconds: cpuMs.map((ms) => ms / 1000),
    runCpuMs: cpuMs,
    mode: 'cold-warm',
    openFds: [],
    requests: 6 * cpuMs.length,
    wallMs: 0,
    cpuMs: 0,
    peakRssBytes: rssMiB * 2 ** 20,
    exitCode: 0,
    loadAverage: 0,
  }) satisfies ScenarioResult;

describe('drift choice', () => {
  it('is reproducible and picks exactly the fraction asked, half changed and half missing', () => {
    const a = chooseDrift(1000, 0.1, 7);
    const b = chooseDrift(1000, 0.1, 7);
    expect([...a.changed]).toEqual([...b.changed]);
    expect(a.changed.size + a.missing.size).toBe(100);
    expect(a.changed.size).toBe(50);
    expect([...a.changed].some((i) => a.missing.has(i))).toBe(false);
  });
});

describe('the scaling set (--scaling)', () => {
  it('runs the loop mode at about 5k, 50k and 200k objects, more clusters rather than more per namespace', () => {
    const set = scalingSuite(false);
    expect(set.map((s) => s.scale.clusters * s.scale.namespaces * s.scale.resources)).toEqual([
      5_000, 50_000, 200_000,
    ]);
    expect(new Set(set.map((s) => `${s.scale.namespaces}x${s.scale.resources}`)).size).toBe(1);
    expect(
      set.every((s) => s.mode === 'cold-warm' && s.iterations === 3 && s.latencyMs === 50),
    ).toBe(true);
  });

  it('tabulates the scales in order, per object too, and says nothing for a single scale', () => {
    const lines = scalingLines([
      loopRun(10, [2000, 400, 300, 500], 400),
      loopRun(1, [1000, 40, 30], 200),
    ]);
    const rows = lines.filter((l) => /^\| \d+×/.test(l));
    expect(rows).toEqual([
      '| 1×10×10 | 100 | 6 | 1.00 / 1.00 | 0.04 / 0.04 | 200 | 10000.0 | 400.0 | 20000.0 | 0.00 |',
      '| 10×10×10 | 1,000 | 6 | 2.00 / 2.00 | 0.40 / 0.40 | 400 | 2000.0 | 400.0 | 4000.0 | 0.00 |',
    ]);
    expect(scalingLines([loopRun(1, [1000, 40], 200)])).toEqual([]);
  });

  it('draws the scales as a chart: one point per scale and series, higher cost higher up', () => {
    const points = scalingPoints([
      loopRun(40, [40_000, 8_000, 9_000], 1600),
      loopRun(1, [4_000, 500, 600], 350),
      loopRun(10, [20_000, 2_000, 2_500], 700),
    ]);
    const svg = scalingChartSvg(points, 'a <test> run');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    // Its accessible name comes first.
    expect(svg.split('\n')[1]).toMatch(/^<title>How cost grows/);
    expect(svg).toContain('a &lt;test&gt; run');
    // x: 100, 1k and 4k objects; one polyline per series, a point per scale.
    expect(
      [...svg.matchAll(/class="tick" text-anchor="middle">([^<]+)</g)].map((m) => m[1]),
    ).toEqual(['100', '1k', '4k', 'objects', '100', '1k', '4k', 'objects']);
    const series: Record<string, [number, number][]> = Object.fromEntries(
      [...svg.matchAll(/data-series="([^"]+)" stroke="[^"]+" points="([^"]+)"/g)].map((m) => [
        m[1],
        m[2]!.split(' ').map((p) => p.split(',').map(Number) as [number, number]),
      ]),
    );
    expect(Object.keys(series)).toEqual(['cold run', 'warm run (median)', 'peak RSS']);
    for (const line of Object.values(series)) {
      expect(line).toHaveLength(3);
      const xs = line.map(([x]) => x);
      const ys = line.map(([, y]) => y);
      expect(xs).toEqual([...xs].sort((a, b) => a - b));
      // SVG y grows downwards: more CPU or memory is drawn higher.
      expect(ys).toEqual([...ys].sort((a, b) => b - a));
    }
    // The warm median of [8 s, 9 s] is the 9 s run (the larger of two, as the table takes it).
    expect(svg).toContain('<title>warm run (median): 9</title>');
    expect(svg).toContain('<title>cold run: 40</title>');
    expect(svg).toContain('<title>peak RSS: 1600</title>');
    expect(() => scalingChartSvg(points.slice(0, 1), '')).toThrow(/two scales/);
  });

  it('rounds the axis up to 1, 2, 2.5 or 5 times a power of ten per tick', () => {
    expect([niceMax(0), niceMax(3.7), niceMax(9), niceMax(41), niceMax(1614)]).toEqual([
      1, 4, 10, 80, 2000,
    ]);
  });
});

describe('the pages the full runs write', () => {
  const machine = {
    date: '2026-11-29T08:00:00.000Z',
    nproc: 2,
    cpuModel: 'test CPU',
    memoryBytes: 2 ** 30,
    node: 'v24.0.0',
    platform: 'linux x64',
  };

  it('puts the targets in the short page and every table in the history, hand-written text kept', () => {
    const report: SuiteReport = {
      suite: 'large',
      machine,
      scenarios: [
        {
          kind: 'compute',
          name: 'hash + compare',
          objectsPerSecond: 60_000,
          yamlObjectsPerSecond: 40_000,
          wallMs: 1000,
          cpuMs: 1000,
          peakRssBytes: 2 ** 27,
          exitCode: 0,
          loadAverage: 1,
        },
      ],
    };
    const headline = headlineMarkdown(report);
    expect(headline).toContain('Suite `large`, run 2026-11-29 08:00 UTC on 2 CPUs (test CPU)');
    expect(headline).toContain(
      '| hash + compare ≥ 50,000 objects/s per core | 60,000 objects/s | yes |',
    );
    expect(headline).not.toContain('| measurement |');
    expect(markdownReport(report)).toContain('| measurement |');

    const page = [
      '# Benchmarks',
      '',
      'Hand-written.',
      '',
      '<!-- bench:scaling:start -->',
      'old scaling',
      '<!-- bench:scaling:end -->',
      '',
      '<!-- bench:results:start -->',
      'old results',
      '<!-- bench:results:end -->',
      '',
      'After.',
      '',
    ].join('\n');
    const written = spliceResults(page, headline);
    expect(written).not.toContain('old results');
    expect(written).toContain('old scaling');
    expect(written.startsWith('# Benchmarks\n\nHand-written.\n')).toBe(true);
    expect(written.endsWith('<!-- bench:results:end -->\n\nAfter.\n')).toBe(true);
    const scaled = spliceResults(written, 'new scaling\n', 'scaling');
    expect(scaled).toContain(
      '<!-- bench:scaling:start -->\n\nnew scaling\n\n<!-- bench:scaling:end -->',
    );
    expect(scaled).toContain(headline);
    // A page without markers gets the block at its end.
    expect(spliceResults('# Page\n', 'x\n', 'scaling')).toBe(
      '# Page\n\n<!-- bench:scaling:start -->\n\nx\n\n<!-- bench:scaling:end -->\n',
    );
  });

  it('draws no chart from a report of one scale', () => {
    const one: SuiteReport = { suite: 'large', machine, scenarios: [loopRun(1, [1000, 40], 200)] };
    expect(scalingChartOfReport(one)).toBeUndefined();
    const two: SuiteReport = {
      ...one,
      scenarios: [...one.scenarios, loopRun(2, [2000, 80], 300)],
    };
    expect(scalingChartOfReport(two)).toContain('2026-11-29 08:00 UTC, 2 CPUs (test CPU)');
  });
});

describe('lower bound', () => {
  it('counts pages per cluster and kind plus writes, spread over the pool', () => {
    const listed = new Map([
      [
        'c1',
        new Map([
          ['ConfigMap', 1500],
          ['Secret', 0],
        ]),
      ],
      ['c2', new Map([['ConfigMap', 501]])],
    ]);
    const b = lowerBound({ listed, writes: 5, latencyMs: 50, concurrency: 2 });
    expect(b.listRequests).toBe(3 + 1 + 2);
    expect(b.requests).toBe(11);
    expect(b.ms).toBeCloseTo((11 / 2) * 50);
  });

  it('never goes below the longest chain of pages', () => {
    const listed = new Map([['c1', new Map([['ConfigMap', 5000]])]]);
    expect(lowerBound({ listed, writes: 0, latencyMs: 10, concurrency: 100 }).ms).toBe(100);
  });
});

describe('the small suite (harness only; timings are not asserted)', () => {
  it('reports every scenario, with no writes in steady state and one per drifted object', async () => {
    const wanted = (s: Scenario) => {
      // The triggers have their own test below.
      if (s.kind === 'trigger') return false;
      if (s.kind !== 'integration') return true;
      const steadyDryRun = s.workload === Workload.resources && s.drift === 0 && s.dryRun;
      return steadyDryRun || (s.drift === 0.1 && !s.dryRun);
    };
    const scenarios = smallSuite({
      latencies: [1],
      loopIterations: 3,
      loopModeIterations: 2,
    }).filter(wanted);
    const report = await runSuite(scenarios, { suite: 'test' });

    expect(report.machine.nproc).toBeGreaterThan(0);
    expect(report.scenarios.map((s) => s.name)).toHaveLength(scenarios.length);
    for (const s of report.scenarios) {
      expect(s.exitCode).toBe(0);
      expect(s.peakRssBytes).toBeGreaterThan(0);
    }
    const runs = report.scenarios.filter((s) => s.kind === 'integration');
    for (const r of runs) {
      expect(r.scale).toEqual(SMALL_SCALE);
      expect(r.lowerBound.listRequests).toBeGreaterThan(0);
      expect(r.requests.byVerb.list).toBeGreaterThanOrEqual(r.lowerBound.listRequests);
      expect(r.writes).toBe(r.expectedWrites);
      if (r.drift === 0 || r.dryRun) expect(r.writes).toBe(0);
      else expect(r.writes).toBe(r.driftedObjects);
    }
    expect(runs.filter((r) => !r.dryRun && r.writes > 0).map((r) => r.workload)).toEqual([
      Workload.resources,
      Workload.namespaces,
      Workload.rolebindings,
    ]);
    const compute = report.scenarios.find((s) => s.kind === 'compute');
    expect(compute?.kind === 'compute' && compute.objectsPerSecond).toBeGreaterThan(0);
    const load = report.scenarios.find((s) => s.kind === 'embedded-load');
    expect(load?.kind === 'embedded-load' && load.files).toBeGreaterThan(SMALL_SCALE.clusters);
    const loops = report.scenarios.filter((s) => s.kind === 'loop' && s.mode !== 'cold-warm');
    expect(loops.map((r) => r.kind === 'loop' && r.heapFlag)).toEqual([
      null,
      `--max-old-space-size=${heapSizeForMemoryLimit(LOOP_POD_MEMORY_LIMIT_MIB * 2 ** 20)}`,
    ]);
    for (const r of loops) {
      if (r.kind !== 'loop') continue;
      expect(r.rssBytes).toHaveLength(3);
      expect(Math.min(...r.rssBytes)).toBeGreaterThan(0);
      expect(r.runSeconds).toHaveLength(3);
      expect(r.openFds).toHaveLength(3);
      expect(r.runCpuMs).toHaveLength(3);
      expect(r.requests).toBeGreaterThan(0);
    }
    // Loop mode: one cold run and warm ones, each beside the lower bound; with
    // and without the cache, and as an operator reading watch caches.
    const loopMode = report.scenarios.filter((s) => s.kind === 'loop' && s.mode === 'cold-warm');
    expect(
      loopMode.map(
        (r) => r.kind === 'loop' && [Boolean(r.desiredCacheOff), Boolean(r.watchCaches)],
      ),
    ).toEqual([
      [false, false],
      [true, false],
      [false, true],
    ]);
    for (const r of loopMode) {
      if (r.kind !== 'loop') continue;
      expect(r.runSeconds).toHaveLength(2);
      expect(r.runCpuMs).toHaveLength(2);
      expect(r.lowerBound?.listRequests).toBeGreaterThan(0);
    }
    const github = report.scenarios.filter((s) => s.kind === 'github');
    expect(github.map((r) => r.name)).toEqual([
      'github steady dry-run @1ms',
      'github drift 20% wet @1ms',
    ]);
    for (const r of github) {
      if (r.kind !== 'github') continue;
      // Never fewer reads than one members list per team; exactly the writes the drift needs.
      expect(r.reads).toBeGreaterThanOrEqual(r.lowerBound.reads);
      expect(r.writes).toBe(r.expectedWrites);
    }
    expect(github.map((r) => r.kind === 'github' && r.drifted > 0 && r.writes > 0)).toEqual([
      false,
      true,
    ]);
    // openshift-saas-deploy: exactly one resolve per (repository, ref), one read per
    // (repository, path, commit), one manifest per image; a steady dry-run writes nothing.
    const saas = report.scenarios.filter((s) => s.kind === 'saas');
    expect(saas.map((r) => r.name)).toEqual(['openshift-saas-deploy steady dry-run @1ms']);
    for (const r of saas) {
      if (r.kind !== 'saas') continue;
      expect(r.github).toEqual({
        commits: r.lowerBound.commits,
        contents: r.lowerBound.contents,
        other: 0,
      });
      expect(r.manifests).toBe(r.lowerBound.manifests);
      expect(r.writes).toBe(0);
    }
    const markdown = markdownReport(report);
    expect(markdown).toContain('| openshift-resources steady dry-run @1ms |');
    expect(markdown).toContain(
      "| run-integration loop: openshift-resources steady dry-run ×3 @1ms, Node's default heap |",
    );
    expect(markdown).toContain(
      '| run-integration loop mode: openshift-resources steady dry-run 2×3×5, cold + 1 warm @1ms |',
    );
    expect(markdown).toContain('| run 2 (warm) |');
  }, 180_000);
});

describe('the trigger scenarios (harness only; timings are not asserted)', () => {
  it('read each state key once, resolve each ref once and plan one PipelineRun per changed saas file', async () => {
    const scenarios = smallSuite({ latencies: [1] }).filter((s) => s.kind === 'trigger');
    const report = await runSuite(scenarios, { suite: 'test' });
    expect(report.scenarios.map((r) => r.name)).toEqual([
      'openshift-saas-deploy-trigger-configs steady dry-run @1ms',
      'openshift-saas-deploy-trigger-configs changed 1% dry-run @1ms',
      'openshift-saas-deploy-trigger-moving-commits steady dry-run @1ms',
      'openshift-saas-deploy-trigger-moving-commits changed 1% dry-run @1ms',
    ]);
    const rows = report.scenarios.map((r) => {
      if (r.kind !== 'trigger') throw new Error(`not a trigger result: ${r.name}`);
      // The bound's requests exactly at the state store and GitHub; a dry-run writes nothing.
      expect(r.exitCode).toBe(0);
      expect(r.requests.state).toBe(r.lowerBound.state);
      expect(r.requests.github).toBe(r.lowerBound.github);
      expect(r.requests.api).toBeGreaterThanOrEqual(r.lowerBound.api);
      expect(r.writes).toBe(0);
      return [
        r.seeded.pipelineRuns,
        r.seeded.stateKeys,
        r.changedTargets,
        r.plannedRuns,
        r.expectedRuns,
      ];
    });
    // 4 saas files × 4 targets: the configs' wet run triggers each saas file once
    // and stores all 16 targets; moving-commits stores the 8 following `main`,
    // triggering nothing the first time. 1 % changed: at least one target.
    expect(rows).toEqual([
      [4, 16, 0, 0, 0],
      [4, 16, 1, 1, 1],
      [0, 8, 0, 0, 0],
      [0, 8, 2, 1, 1],
    ]);
    expect(markdownReport(report)).toContain(
      '| openshift-saas-deploy-trigger-configs changed 1% dry-run @1ms | 4 saas files × 4 targets on 2 × 2 namespaces |',
    );
  }, 120_000);
});

describe('the watch-mode measurement (harness only; timings are not asserted)', () => {
  it('times each hand edit to its fix, beside one polling run', async () => {
    // run-integration logs to stdout: read from stderr, the measurement waited forever.
    const out = join(await mkdtemp(join(tmpdir(), 'watch-bench-')), 'watch.json');
    const r = await runWatchBench({ small: true, latencyMs: 1, idleSeconds: 1, edits: 2, out });
    expect(r.polling.requestsPerRun.list).toBeGreaterThan(0);
    expect(r.watch.firstIterationRequests.watch).toBeGreaterThan(0);
    expect(r.watch.caches).toMatch(/^watching \d+ kind cache\(s\)/);
    expect([r.watch.edits, r.watch.reverted]).toEqual([2, 2]);
    expect(r.watch.driftReactionP99Ms).toBeGreaterThan(0);
    expect(JSON.parse(await readFile(out, 'utf8')).watch.reverted).toBe(2);
  }, 120_000);
});
