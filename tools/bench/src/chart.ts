import {
  type ScalingPoint,
  type ScenarioResult,
  type SuiteReport,
  scalingPoints,
} from './report.ts';

/**
 * How cost grows, drawn: the scaling set's runs (`npm run bench -- --scaling`)
 * as a self-contained SVG of two panels, CPU seconds of a run (cold and warm
 * median) and peak RSS, against the number of objects. Plain SVG written by
 * hand: no charting library to keep, and GitHub renders it in the docs.
 * Both axes are linear and start at zero, so that a straight line is linear
 * growth and a bend is a step.
 */

const WIDTH = 760;
const HEIGHT = 360;
const PANEL = { width: 300, height: 220, top: 84, left: [70, 440] } as const;
const TITLE = 'How cost grows: run-integration loop mode, openshift-resources';
const COLOURS = { cold: '#c0392b', warm: '#2471a3', rss: '#7d3c98' } as const;

interface Series {
  readonly label: string;
  readonly colour: string;
  readonly values: readonly (number | undefined)[];
}

/** A round axis maximum at or above `max` (1, 2 or 5 times a power of ten, four ticks). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const step = max / 4;
  const power = 10 ** Math.floor(Math.log10(step));
  const nice = [1, 2, 2.5, 5, 10].find((m) => m * power >= step) ?? 10;
  return nice * power * 4;
}

const xmlText = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const compact = (n: number) =>
  n >= 1000 ? `${Number((n / 1000).toFixed(n % 1000 === 0 ? 0 : 1))}k` : String(n);

const round = (n: number) => Number(n.toFixed(1));

function panel(
  left: number,
  title: string,
  objects: readonly number[],
  series: readonly Series[],
  format: (v: number) => string,
): string[] {
  const xMax = Math.max(...objects);
  const yMax = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter(isNumber))));
  const x = (o: number) => round(left + (o / xMax) * PANEL.width);
  const y = (v: number) => round(PANEL.top + PANEL.height - (v / yMax) * PANEL.height);
  const bottom = PANEL.top + PANEL.height;
  const out = [
    `<text x="${left}" y="${PANEL.top - 16}" class="title">${xmlText(title)}</text>`,
    `<line x1="${left}" y1="${bottom}" x2="${left + PANEL.width}" y2="${bottom}" class="axis"/>`,
    `<line x1="${left}" y1="${PANEL.top}" x2="${left}" y2="${bottom}" class="axis"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax / 4) * i;
    out.push(
      `<line x1="${left}" y1="${y(v)}" x2="${left + PANEL.width}" y2="${y(v)}" class="grid"/>`,
      `<text x="${left - 6}" y="${y(v) + 4}" class="tick" text-anchor="end">${xmlText(format(v))}</text>`,
    );
  }
  for (const o of objects) {
    out.push(
      `<line x1="${x(o)}" y1="${bottom}" x2="${x(o)}" y2="${bottom + 4}" class="axis"/>`,
      `<text x="${x(o)}" y="${bottom + 18}" class="tick" text-anchor="middle">${compact(o)}</text>`,
    );
  }
  out.push(
    `<text x="${left + PANEL.width / 2}" y="${bottom + 36}" class="tick" text-anchor="middle">objects</text>`,
  );
  series.forEach((s, i) => {
    const points = objects.flatMap((o, j) => {
      const v = s.values[j];
      return v === undefined ? [] : [[x(o), y(v), v] as const];
    });
    out.push(
      `<polyline class="series" data-series="${xmlText(s.label)}" stroke="${s.colour}" points="${points.map(([px, py]) => `${px},${py}`).join(' ')}"/>`,
      ...points.map(
        ([px, py, v]) =>
          `<circle cx="${px}" cy="${py}" r="3.5" fill="${s.colour}"><title>${xmlText(`${s.label}: ${format(v)}`)}</title></circle>`,
      ),
      `<rect x="${left + 10}" y="${PANEL.top + 8 + i * 16}" width="10" height="10" fill="${s.colour}"/>`,
      `<text x="${left + 26}" y="${PANEL.top + 17 + i * 16}" class="legend">${xmlText(s.label)}</text>`,
    );
  });
  return out;
}

function isNumber(v: number | undefined): v is number {
  return v !== undefined;
}

/** The chart of the scaling points (at least two scales), with `caption` under its title. */
export function scalingChartSvg(points: readonly ScalingPoint[], caption: string): string {
  if (points.length < 2) throw new Error('the scaling chart needs runs of at least two scales');
  const objects = points.map((p) => p.objects);
  const seconds = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
  const body = [
    ...panel(
      PANEL.left[0],
      'CPU seconds per run',
      objects,
      [
        { label: 'cold run', colour: COLOURS.cold, values: points.map((p) => p.cold.cpuMs / 1000) },
        {
          label: 'warm run (median)',
          colour: COLOURS.warm,
          values: points.map((p) => (p.warmMedian ? p.warmMedian.cpuMs / 1000 : undefined)),
        },
      ],
      seconds,
    ),
    ...panel(
      PANEL.left[1],
      'peak RSS, MiB',
      objects,
      [{ label: 'peak RSS', colour: COLOURS.rss, values: points.map((p) => p.peakRssMiB) }],
      (v) => v.toFixed(0),
    ),
  ];
  return `${[
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img">`,
    // What a screen reader says (and what Biome's accessibility rule asks of an SVG).
    `<title>${TITLE}: CPU seconds per run and peak RSS against objects</title>`,
    '<style>text{font-family:sans-serif;fill:#333}.title{font-size:14px;font-weight:bold}.tick,.legend{font-size:11px}.caption{font-size:11px;fill:#666}.axis{stroke:#333}.grid{stroke:#ddd}.series{fill:none;stroke-width:2}</style>',
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${PANEL.left[0]}" y="20" class="title">${TITLE}</text>`,
    `<text x="${PANEL.left[0]}" y="40" class="caption">${xmlText(caption)}</text>`,
    ...body,
    '</svg>',
  ].join('\n')}\n`;
}

/**
 * The chart of a report of the scaling set, or undefined when it holds fewer
 * than two scales (a partial run draws nothing rather than a misleading line).
 */
export function scalingChartOfReport(report: SuiteReport): string | undefined {
  const points = scalingPoints(
    report.scenarios.filter(
      (r): r is Extract<ScenarioResult, { kind: 'loop' }> => r.kind === 'loop',
    ),
  );
  if (points.length < 2) return undefined;
  const m = report.machine;
  const first = points[0]!.run;
  // The machine's load when each scale started: wall times under load are longer, CPU much less so.
  const load = points.map((p) => p.run.loadAverage);
  const [low, high] = [Math.min(...load).toFixed(1), Math.max(...load).toFixed(1)];
  const loads = low === high ? low : `${low}–${high}`;
  return scalingChartSvg(
    points,
    `@${first.latencyMs} ms, one cold run then warm runs; ${m.date.slice(0, 16).replace('T', ' ')} UTC, ` +
      `${m.nproc} CPUs (${m.cpuModel}), Node ${m.node}, load ${loads}`,
  );
}
