import { type ClientKey, defineClient, QontractError, type RunContext } from '@qontract/core';
import type { GitlabApi, GitlabInstanceSettings } from './api.ts';

/** Closes the connection pools of the clients this package created (not of test doubles). */
const closers = new WeakMap<GitlabApi, () => Promise<void>>();

/**
 * The run's client key of one GitLab instance (id `gitlab:<instance name>`); a test
 * passes its own `GitlabApi` under `gitlabClientKey(instance).id` in `RunSettings.clients`.
 */
export function gitlabClientKey(instance: GitlabInstanceSettings): ClientKey<GitlabApi> {
  return defineClient<GitlabApi>(
    `gitlab:${instance.name}`,
    async (ctx) => {
      // Loaded on first use: gitbeaker and its own undici cost every other command
      // (and `--help`) about 0.2 s of start-up when imported with the registry.
      const { createGitlabApi } = await import('./api.ts');
      const api = createGitlabApi({
        url: instance.url,
        // Read through the run's secret reader, which registers it for redaction.
        token: await ctx.secrets.read(instance.token),
        sslVerify: instance.sslVerify,
        signal: ctx.signal,
        log: ctx.log,
        // The original counts every request of its GitLab session (qontract_reconcile_gitlab_request_total).
        onRequest: () => ctx.metrics.gitlabRequests.inc({ integration: ctx.integration }),
        ...retryUnitFromEnv(ctx.env.vars),
      });
      closers.set(api, api.close);
      return api;
    },
    (api) => closers.get(api)?.(),
  );
}

/** The run's client for this instance (token read through ctx.secrets), created once per run and instance. */
export function gitlabApi(ctx: RunContext, instance: GitlabInstanceSettings): Promise<GitlabApi> {
  return ctx.client(gitlabClientKey(instance));
}

/**
 * `QONTRACT_GITLAB_RETRY_UNIT_MS`: the first backoff between retries (500 ms
 * by default, doubled per retry up to 120 units), as
 * `QONTRACT_GITHUB_RETRY_UNIT_MS` is GitHub's. Tests and benchmarks set it;
 * production keeps the default.
 */
function retryUnitFromEnv(vars: Readonly<Record<string, string | undefined>>): {
  backoffMs?: number;
  maxBackoffMs?: number;
} {
  const raw = vars.QONTRACT_GITLAB_RETRY_UNIT_MS;
  if (raw === undefined || raw === '') return {};
  const unit = Number(raw);
  if (!Number.isInteger(unit) || unit < 0) {
    throw new QontractError(
      `QONTRACT_GITLAB_RETRY_UNIT_MS must be a whole number of at least 0, not '${raw}'`,
    );
  }
  return { backoffMs: unit, maxBackoffMs: unit * 120 };
}
