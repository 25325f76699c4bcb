import { Gauge, Registry } from 'prom-client';
import { errorMessage } from './errors.ts';

/** Where a CronJob's run pushes its metrics (`PUSHGATEWAY_URL`, `_USERNAME`, `_PASSWORD`). */
export interface PushgatewayTarget {
  readonly url: string;
  readonly username: string;
  readonly password: string;
}

/** The grouping key of a push: the run's labels, as the original groups them. */
type RunLabels = { integration: string; shards: string; shard_id: string };

const REQUIRED = ['PUSHGATEWAY_USERNAME', 'PUSHGATEWAY_PASSWORD', 'PUSHGATEWAY_URL'] as const;

/**
 * The Pushgateway of `PUSHGATEWAY_ENABLED` (any non-empty value, as upstream):
 * undefined when not enabled, an error naming the variables that are missing.
 */
export function pushgatewayFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): PushgatewayTarget | { readonly error: string } | undefined {
  if (!env.PUSHGATEWAY_ENABLED) return undefined;
  const missing = REQUIRED.filter((name) => !env[name]);
  if (missing.length > 0) {
    return { error: `cannot push to the Pushgateway: ${missing.join(', ')} not set` };
  }
  return {
    url: env.PUSHGATEWAY_URL ?? '',
    username: env.PUSHGATEWAY_USERNAME ?? '',
    password: env.PUSHGATEWAY_PASSWORD ?? '',
  };
}

/**
 * Replaces (PUT) the group `job/qontract-reconcile/integration/…/shards/…/shard_id/…`
 * on the Pushgateway with this run's duration and status, the two gauges the
 * original pushes from a CronJob (whose pod is gone before Prometheus could
 * scrape it). prom-client's own Pushgateway class is not used: it builds its
 * URLs with `url.parse`, which prints a deprecation warning on Node 24, and it
 * cannot encode an empty or `/`-bearing label value. Resolves with an error
 * message (never naming the credentials) when the push fails.
 */
export async function pushRunMetrics(
  target: PushgatewayTarget,
  labels: RunLabels,
  run: { seconds: number; exitCode: number },
  timeoutMs = 30_000,
): Promise<string | undefined> {
  const registry = new Registry();
  const labelNames = ['integration', 'shards', 'shard_id'] as const;
  new Gauge({
    name: 'qontract_reconcile_last_run_seconds',
    help: 'Last run duration in seconds',
    labelNames,
    registers: [registry],
  }).set(labels, run.seconds);
  new Gauge({
    name: 'qontract_reconcile_last_run_status',
    help: 'Last run status',
    labelNames,
    registers: [registry],
  }).set(labels, run.exitCode);
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return 'cannot push to the Pushgateway: PUSHGATEWAY_URL is not a URL';
  }
  // Credentials in the URL itself would reach error messages: they go in the header only.
  url.username = '';
  url.password = '';
  const group = [
    ['job', 'qontract-reconcile'],
    ['integration', labels.integration],
    ['shards', labels.shards],
    ['shard_id', labels.shard_id],
  ]
    .map(([name, value]) => groupSegment(name ?? '', value ?? ''))
    .join('/');
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/metrics/${group}`;
  const where = `${url.origin}${url.pathname}`;
  try {
    const response = await fetch(url, {
      method: 'PUT',
      headers: {
        'Content-Type': registry.contentType,
        Authorization: `Basic ${Buffer.from(`${target.username}:${target.password}`).toString('base64')}`,
      },
      body: await registry.metrics(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = (await response.text()).trim().slice(0, 300);
    if (!response.ok) {
      return `pushing to the Pushgateway failed: PUT ${where}: HTTP ${response.status}${text ? ` ${text}` : ''}`;
    }
    return undefined;
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
    return `pushing to the Pushgateway failed: PUT ${where}: ${errorMessage(cause)}`;
  }
}

/** A `name/value` path segment; the Pushgateway's base64 form for values a path cannot carry. */
function groupSegment(name: string, value: string): string {
  if (value === '') return `${name}@base64/=`;
  if (value.includes('/')) {
    return `${name}@base64/${Buffer.from(value, 'utf8').toString('base64url')}`;
  }
  return `${name}/${encodeURIComponent(value)}`;
}
