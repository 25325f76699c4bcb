import { z } from 'zod';
import { QontractError } from './errors.ts';

type Env = Readonly<Record<string, string | undefined>>;

const onOff = (name: string) =>
  z
    .enum(['on', 'off'], {
      error: (i) => `${name} must be 'on' or 'off', got ${JSON.stringify(i.input)}`,
    })
    .optional();
const wholeNumber = (name: string, what: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: (i) => `${name} must be ${what}, got ${JSON.stringify(i.input)}` })
    .transform(Number)
    .optional();

/** The tuning variables of the engine and the pipeline, read once per loop. */
const TuningSchema = z.object({
  QONTRACT_LOOP_CACHES: onOff('QONTRACT_LOOP_CACHES'),
  QONTRACT_LIST_REUSE: onOff('QONTRACT_LIST_REUSE'),
  QONTRACT_DESIRED_CACHE: onOff('QONTRACT_DESIRED_CACHE'),
  QONTRACT_PARSE_THREADS: wholeNumber(
    'QONTRACT_PARSE_THREADS',
    'a whole number of threads (0: none)',
  ),
  QONTRACT_CLUSTER_RETRY_UNIT_MS: wholeNumber(
    'QONTRACT_CLUSTER_RETRY_UNIT_MS',
    'a whole number of milliseconds',
  ),
});

export interface LoopTuning {
  /** `QONTRACT_LOOP_CACHES=off`: no cache outlives a run (every switch below off at once). */
  readonly loopCaches: boolean;
  /** `QONTRACT_LIST_REUSE=off`: a loop decodes every listed object again, plans every cluster again. */
  readonly listReuse: boolean;
  /** `QONTRACT_DESIRED_CACHE=off`: the pipeline builds every desired object on every run. */
  readonly desiredCache: boolean;
  /** `QONTRACT_PARSE_THREADS`: worker threads loading resource files (0: none; default: by size). */
  readonly parseThreads: number | undefined;
  /** `QONTRACT_CLUSTER_RETRY_UNIT_MS`: the clusters' pause between retries (tests shrink it). */
  readonly clusterRetryUnitMs: number | undefined;
}

/**
 * The tuning variables, parsed once: a bad value is a QontractError naming the
 * variable (the run fails with exit code 1, no stack trace). An empty value is
 * the default, as an unset one.
 */
export function parseTuning(env: Env): LoopTuning {
  const given = Object.fromEntries(
    Object.keys(TuningSchema.shape).map((k) => [k, env[k] || undefined]),
  );
  const parsed = TuningSchema.safeParse(given);
  if (!parsed.success) throw new QontractError(parsed.error.issues[0]?.message ?? 'bad tuning');
  const t = parsed.data;
  const loopCaches = t.QONTRACT_LOOP_CACHES !== 'off';
  return {
    loopCaches,
    listReuse: loopCaches && t.QONTRACT_LIST_REUSE !== 'off',
    desiredCache: loopCaches && t.QONTRACT_DESIRED_CACHE !== 'off',
    parseThreads: t.QONTRACT_PARSE_THREADS,
    clusterRetryUnitMs: t.QONTRACT_CLUSTER_RETRY_UNIT_MS,
  };
}

interface Entry {
  readonly value: unknown;
  readonly close?: ((value: never) => void) | undefined;
}

/**
 * What the runs of one loop share, with one lifetime: created by the loop
 * (run-integration's, or the runner for a single run), closed when the loop
 * ends. Every cache that outlives a run lives here, under a key of its owner;
 * nothing of it is module-level. A single run gets an empty scope of its own,
 * closed with the run.
 */
export class LoopScope {
  /** Whether the runs repeat in this process (run-integration's loop without RUN_ONCE). */
  readonly repeats: boolean;
  readonly #env: Env;
  #tuning: LoopTuning | undefined;
  readonly #entries = new Map<string, Entry>();

  constructor(options: { readonly repeats: boolean; readonly env: Env }) {
    this.repeats = options.repeats;
    this.#env = options.env;
  }

  /** The tuning variables, parsed on first use (a bad value fails the run that reads it). */
  get tuning(): LoopTuning {
    this.#tuning ??= parseTuning(this.#env);
    return this.#tuning;
  }

  /**
   * State the loop's runs need for as long as the loop runs, whatever the
   * tuning (watch mode's caches, the cluster clients they hold).
   */
  keep<T>(key: string, create: () => T, close?: (value: T) => void): T {
    const entry = this.#entries.get(key);
    if (entry) return entry.value as T;
    const value = create();
    this.#entries.set(key, { value, close: close as Entry['close'] });
    return value;
  }

  /** What `keep` holds under `key`, without creating it. */
  peek<T>(key: string): T | undefined {
    return this.#entries.get(key)?.value as T | undefined;
  }

  /** A cache of the loop's runs (the desired objects, the last answers); undefined with `QONTRACT_LOOP_CACHES=off`. */
  cache<T>(key: string, create: () => T): T | undefined {
    return this.tuning.loopCaches ? this.keep(key, create) : undefined;
  }

  /**
   * A cache worth its memory only when the runs repeat (what a run lists, for
   * the next run's): undefined in a single run, and with the loop caches off.
   */
  repeatCache<T>(key: string, create: () => T): T | undefined {
    return this.repeats ? this.cache(key, create) : undefined;
  }

  /** Ends the loop: closes what it kept (connections, watches). */
  close(): void {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const { value, close } of entries) close?.(value as never);
  }
}
