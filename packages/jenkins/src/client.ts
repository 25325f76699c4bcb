import { setTimeout as delay } from 'node:timers/promises';
import { QontractError } from '@qontract/core';
import { z } from 'zod';

/*
 * Why Node's fetch with zod instead of a Jenkins client library: the trigger
 * reads one URL (`/api/json?tree=...`) with Basic auth; the npm clients (e.g.
 * `jenkins`) type answers as `any` and bring their own HTTP stack. A small loop
 * over the platform's fetch gives the run's AbortSignal, bounded retries, and
 * zod checks where the answer enters.
 */

/**
 * One build as the original's `JobBuildState` keeps it (and stores it as the
 * trigger's state): the fields Jenkins answered, `actions` as answered, plus
 * `commit_sha` from the last action with a `lastBuiltRevision`.
 */
export interface JobBuildState {
  readonly number: number;
  readonly _class?: string;
  readonly actions?: readonly unknown[];
  readonly result?: string | null;
  readonly commit_sha?: string;
}

/** Where an instance lives and who reads it (the `[jenkins]` table of its token secret). */
export interface JenkinsSettings {
  readonly url: string;
  readonly user: string;
  readonly password: string;
}

/** Test seams: another fetch, a fake clock for retry waits, fewer attempts. */
export interface JenkinsClientOptions {
  readonly signal?: AbortSignal | undefined;
  readonly fetch?: typeof fetch | undefined;
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** Total attempts per request (default 3, as the original's `@retry()`). */
  readonly attempts?: number | undefined;
  /** Told about each retry (the caller logs it). */
  readonly onRetry?: ((message: string) => void) | undefined;
}

/** A request Jenkins refused or answered in a shape we do not understand; the caller names the instance. */
export class JenkinsRequestError extends QontractError {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** Per attempt, as the original's `timeout=60`. */
const TIMEOUT_MS = 60_000;
const BACKOFF_MS = 1000;

/**
 * The original's `get_jobs_state` query, asking for the newest build of each
 * job only (`{0,1}`): the trigger reads nothing but the first build, and
 * without the range Jenkins sends up to 100 builds with their actions per job.
 */
const JOBS_STATE_TREE = 'jobs[name,builds[number,result,actions[lastBuiltRevision[SHA1]]]{0,1}]';

const buildSchema = z.object({
  _class: z.string().optional(),
  number: z.number().int(),
  result: z.string().nullable().optional(),
  actions: z.array(z.unknown()).optional(),
});
const jobsSchema = z.object({
  jobs: z
    .array(z.object({ name: z.string(), builds: z.array(buildSchema).optional() }))
    .nullable()
    .optional(),
});

/** Reads one Jenkins instance with Basic auth (user and API token). */
export class JenkinsApi {
  readonly #settings: JenkinsSettings;
  readonly #options: JenkinsClientOptions;

  constructor(settings: JenkinsSettings, options: JenkinsClientOptions = {}) {
    this.#settings = settings;
    this.#options = options;
  }

  /**
   * The newest build of every job, by job name (upstream `get_jobs_state`): a
   * list of at most one `JobBuildState`, empty for a job never built.
   */
  async jobsState(): Promise<Map<string, JobBuildState[]>> {
    const body = await this.#get('/api/json', { tree: JOBS_STATE_TREE }, jobsSchema);
    const state = new Map<string, JobBuildState[]>();
    for (const job of body.jobs ?? []) {
      state.set(job.name, (job.builds ?? []).map(jobBuildState));
    }
    return state;
  }

  async #get<T>(path: string, query: Record<string, string>, schema: z.ZodType<T>): Promise<T> {
    const url = new URL(this.#settings.url.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    // What errors show: the path and query, never the credentials.
    const what = `GET ${path}${url.search ? `?${decodeURIComponent(url.search.slice(1))}` : ''}`;
    const attempts = this.#options.attempts ?? 3;
    const signal = this.#options.signal;
    const doFetch = this.#options.fetch ?? fetch;
    const auth = Buffer.from(`${this.#settings.user}:${this.#settings.password}`).toString(
      'base64',
    );
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      let status = 0;
      let problem: string;
      try {
        const timeout = AbortSignal.timeout(TIMEOUT_MS);
        const res = await doFetch(url, {
          headers: { Authorization: `Basic ${auth}`, Accept: 'application/json' },
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        status = res.status;
        const text = await res.text();
        if (res.ok) return parse(text, schema, what);
        problem = `HTTP ${res.status}`;
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (e instanceof JenkinsRequestError) throw e;
        problem = `no answer: ${connectionProblem(e)}`;
      }
      // Refusals (401, 403, 404) will not change on a retry; server trouble may.
      const retryable = status === 0 || status === 408 || status === 429 || status >= 500;
      if (!retryable || attempt >= attempts) {
        throw new JenkinsRequestError(
          `${what}: ${problem}${attempt > 1 ? ` (after ${attempt} attempts)` : ''}`,
          status,
        );
      }
      const waitMs = BACKOFF_MS * attempt;
      this.#options.onRetry?.(`${what}: ${problem}, retrying in ${waitMs / 1000}s`);
      const sleep = this.#options.sleep ?? ((ms, s) => delay(ms, undefined, { signal: s }));
      await sleep(waitMs, signal);
    }
  }
}

/** Upstream `_build_job_build_state`: the answered fields plus the commit of the last git action. */
function jobBuildState(build: z.infer<typeof buildSchema>): JobBuildState {
  const commit = commitSha(build.actions ?? []);
  return {
    number: build.number,
    ...(build._class === undefined ? {} : { _class: build._class }),
    ...(build.actions === undefined ? {} : { actions: build.actions }),
    ...(build.result === undefined ? {} : { result: build.result }),
    ...(commit ? { commit_sha: commit } : {}),
  };
}

/** The SHA1 of the last action that has a `lastBuiltRevision` (the git plugin's BuildData). */
function commitSha(actions: readonly unknown[]): string | undefined {
  for (let i = actions.length - 1; i >= 0; i--) {
    const revision = (actions[i] as { lastBuiltRevision?: unknown } | null)?.lastBuiltRevision;
    // An empty revision counts as none (a falsy dict upstream).
    if (revision && typeof revision === 'object' && Object.keys(revision).length > 0) {
      const sha = (revision as { SHA1?: unknown }).SHA1;
      return typeof sha === 'string' ? sha : undefined;
    }
  }
  return undefined;
}

function parse<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new JenkinsRequestError(`${what}: the answer is not JSON`, 200);
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const where = first?.path.join('.') || '(root)';
  throw new JenkinsRequestError(`${what}: unexpected answer (${where}: ${first?.message})`, 200);
}

function connectionProblem(e: unknown): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return `timed out after ${TIMEOUT_MS / 1000}s`;
  }
  const cause = e instanceof Error ? (e.cause as { code?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  return e instanceof Error ? e.message : String(e);
}
