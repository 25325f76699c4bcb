import type { FaultRule } from './faults.ts';
import type { Verb } from './route.ts';

/** A fault rule for one cluster, or (no `cluster`) for every cluster. */
export interface ClusterFault {
  readonly cluster?: string;
  readonly rule: FaultRule;
}

type FieldKind = 'verb' | 'text' | 'count' | 'rate' | 'status' | 'flag';

/**
 * Every field of the library's FaultRule and how it is written. Typed against
 * FaultRule so that a field added there must be added here too, and the
 * command and the control endpoint always speak the library's fault model.
 */
const FIELDS = {
  verb: 'verb',
  resource: 'text',
  namespace: 'text',
  name: 'text',
  latencyMs: 'count',
  errorRate: 'rate',
  status: 'status',
  retryAfter: 'count',
  drop: 'flag',
  hang: 'flag',
  continued: 'flag',
  times: 'count',
} as const satisfies Record<keyof Required<FaultRule>, FieldKind>;

/** A rule without one of these does nothing. */
const EFFECTS = ['latencyMs', 'status', 'drop', 'hang'] as const satisfies ReadonlyArray<
  keyof FaultRule
>;

const VERBS: readonly Verb[] = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'apply',
  'delete',
  'deletecollection',
  'discovery',
  'other',
];

export class FaultSpecError extends Error {}

/**
 * A fault written as `key=value` pairs separated by commas, e.g.
 * `cluster=k8s,verb=list,resource=secrets,status=503,times=1`; a flag may be
 * written bare (`drop`). JSON (`{"cluster": "k8s", "status": 503}`) is taken
 * too.
 */
export function parseFaultSpec(text: string): ClusterFault {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (e) {
      throw new FaultSpecError(`fault "${trimmed}": invalid JSON: ${(e as Error).message}`);
    }
    return faultFromJson(value);
  }
  const entries: Array<[string, unknown]> = [];
  for (const part of trimmed.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    entries.push(eq < 0 ? [item, true] : [item.slice(0, eq).trim(), item.slice(eq + 1).trim()]);
  }
  return build(entries, trimmed, true);
}

/** A fault given as a JSON object: the FaultRule fields plus an optional `cluster`. */
export function faultFromJson(value: unknown): ClusterFault {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FaultSpecError(`a fault must be an object, got ${JSON.stringify(value)}`);
  }
  return build(Object.entries(value), JSON.stringify(value), false);
}

function build(entries: Array<[string, unknown]>, shown: string, fromText: boolean): ClusterFault {
  const fail = (why: string): never => {
    throw new FaultSpecError(`fault ${shown}: ${why}`);
  };
  let cluster: string | undefined;
  const rule: Record<string, unknown> = {};
  for (const [key, raw] of entries) {
    if (key === 'cluster') {
      if (typeof raw !== 'string' || raw === '') fail('cluster must be a cluster name');
      cluster = raw as string;
      continue;
    }
    if (!Object.hasOwn(FIELDS, key)) {
      fail(`unknown field "${key}"; fields are cluster, ${Object.keys(FIELDS).join(', ')}`);
    }
    rule[key] = convert(FIELDS[key as keyof typeof FIELDS], key, raw, fromText, fail);
  }
  if (!EFFECTS.some((k) => rule[k] !== undefined && rule[k] !== false)) {
    fail(`it does nothing; give one of ${EFFECTS.join(', ')}`);
  }
  return { ...(cluster !== undefined ? { cluster } : {}), rule: rule as FaultRule };
}

function convert(
  kind: FieldKind,
  key: string,
  raw: unknown,
  fromText: boolean,
  fail: (why: string) => never,
): unknown {
  const number = (): number => {
    const n = fromText && typeof raw === 'string' && raw !== '' ? Number(raw) : raw;
    return typeof n === 'number' ? n : Number.NaN;
  };
  switch (kind) {
    case 'verb':
      if (typeof raw === 'string' && (VERBS as readonly string[]).includes(raw)) return raw;
      return fail(`verb must be one of ${VERBS.join(', ')}`);
    case 'text':
      if (typeof raw === 'string' && raw !== '') return raw;
      return fail(`${key} must be a non-empty string`);
    case 'count': {
      const n = number();
      if (Number.isInteger(n) && n >= 0) return n;
      return fail(`${key} must be a non-negative integer`);
    }
    case 'rate': {
      const n = number();
      if (n >= 0 && n <= 1) return n;
      return fail(`${key} must be a number from 0 to 1`);
    }
    case 'status': {
      const n = number();
      if (Number.isInteger(n) && n >= 100 && n <= 599) return n;
      return fail(`${key} must be an HTTP status code`);
    }
    case 'flag':
      if (typeof raw === 'boolean') return raw;
      if (fromText && (raw === 'true' || raw === 'false')) return raw === 'true';
      return fail(`${key} must be true or false`);
  }
}

/** A small seeded PRNG (mulberry32) for reproducible error rates. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
