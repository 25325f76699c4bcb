import { QontractError, type RunContext, type SecretRef } from '@qontract/core';
import {
  DEFAULT_PAGERDUTY_API_URL,
  PagerDutyHttp,
  type PagerDutyHttpOptions,
  PagerDutyRequestError,
} from './http.ts';
import { PagerDutyOnCall } from './on-call.ts';
import { type PagerDutyTargetRef, validatePagerDutyTarget } from './usernames.ts';

/** A `PagerDutyInstance_v1` of app-interface: a PagerDuty account and its API token. */
export interface PagerDutyInstanceRef {
  readonly name: string;
  readonly token: SecretRef;
}

export interface PagerDutyMap {
  /**
   * PagerDuty names (email local parts) on call now for the target; API
   * failures → QontractError naming the target (never the token).
   */
  onCall(target: PagerDutyTargetRef, now: Date): Promise<string[]>;
}

/** PagerDuty refused a request for a target, or answered in a way no retry could fix. */
export class PagerDutyApiError extends QontractError {}

/** Test seams: a fake clock for retry waits, another fetch, a different retry policy. */
export type PagerDutyMapOptions = Pick<PagerDutyHttpOptions, 'fetch' | 'sleep' | 'retry'>;

/** What a PagerDuty map takes from the run. */
type PagerDutyRunContext = Pick<RunContext, 'secrets' | 'env' | 'signal' | 'log'>;

/**
 * One client per instance (its token read through `ctx.secrets`), talking to
 * `https://api.pagerduty.com` or to `PAGERDUTY_API_URL` from the environment
 * (our addition, so tests and proxies can point elsewhere).
 */
export async function pagerDutyMap(
  ctx: PagerDutyRunContext,
  instances: readonly PagerDutyInstanceRef[],
  options: PagerDutyMapOptions = {},
): Promise<PagerDutyMap> {
  const baseUrl = ctx.env.vars.PAGERDUTY_API_URL || DEFAULT_PAGERDUTY_API_URL;
  const clients = new Map<string, PagerDutyOnCall>();
  const tokens = await Promise.all(instances.map((i) => ctx.secrets.read(i.token)));
  instances.forEach((instance, n) => {
    const http = new PagerDutyHttp({
      ...options,
      baseUrl,
      token: tokens[n] ?? '',
      signal: ctx.signal,
      onRetry: (message) => ctx.log.warn(`PagerDuty instance ${instance.name}: ${message}`),
    });
    clients.set(instance.name, new PagerDutyOnCall(http));
  });

  return {
    async onCall(target, now) {
      const resource = validatePagerDutyTarget(target);
      const what =
        resource.kind === 'schedule'
          ? `schedule ${resource.id}`
          : `escalation policy ${resource.id}`;
      const scope = `pagerduty ${target.name} (${what} of instance ${target.instance.name})`;
      const client = clients.get(target.instance.name);
      if (client === undefined) {
        throw new PagerDutyApiError(
          `${scope}: no PagerDuty instance named ${target.instance.name}`,
        );
      }
      try {
        return resource.kind === 'schedule'
          ? await client.scheduleUsers(resource.id, now)
          : await client.escalationPolicyUsers(resource.id, now);
      } catch (e) {
        if (e instanceof PagerDutyRequestError) {
          throw new PagerDutyApiError(`${scope}: ${e.message}`, { cause: e });
        }
        throw e;
      }
    },
  };
}
