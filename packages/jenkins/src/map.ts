import { QontractError, type RunContext, type SecretRef } from '@qontract/core';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { JenkinsApi, type JenkinsClientOptions } from './client.ts';

/** A `JenkinsInstance_v1` of app-interface (`jenkins_instances_v1 { name token }`). */
export interface JenkinsInstanceRef {
  readonly name: string;
  /** A secret holding TOML: `[jenkins]` with `url`, `user` and `password` (the API token). */
  readonly token: SecretRef;
}

/** An instance's token secret is not the TOML the original reads. */
export class JenkinsSettingsError extends QontractError {}

/** What a Jenkins map takes from the run. */
type JenkinsRunContext = Pick<RunContext, 'secrets' | 'signal' | 'log' | 'redactor'>;

/** Test seams: another fetch, a fake clock, fewer attempts. */
export type JenkinsMapOptions = Pick<JenkinsClientOptions, 'fetch' | 'sleep' | 'attempts'>;

const settingsSchema = z.object({
  jenkins: z.object({ url: z.string().min(1), user: z.string(), password: z.string() }),
});

/**
 * One client per instance name (upstream `jenkins_base.get_jenkins_map`): its
 * token secret read through `ctx.secrets`, parsed as TOML; the first instance
 * of a name wins. The password, and `user:password` (so the Basic header's
 * base64 too), are registered with the run's redactor.
 */
export async function jenkinsMap(
  ctx: JenkinsRunContext,
  instances: readonly JenkinsInstanceRef[],
  options: JenkinsMapOptions = {},
): Promise<Map<string, JenkinsApi>> {
  const unique = new Map<string, JenkinsInstanceRef>();
  for (const instance of instances) {
    if (!unique.has(instance.name)) unique.set(instance.name, instance);
  }
  const entries = await Promise.all(
    [...unique.values()].map(async (instance) => {
      const settings = jenkinsSettings(instance, await ctx.secrets.read(instance.token));
      ctx.redactor.add(settings.password);
      ctx.redactor.add(`${settings.user}:${settings.password}`);
      const api = new JenkinsApi(settings, {
        ...options,
        signal: ctx.signal,
        onRetry: (message) => ctx.log.warn(`jenkins instance ${instance.name}: ${message}`),
      });
      return [instance.name, api] as const;
    }),
  );
  return new Map(entries);
}

function jenkinsSettings(instance: JenkinsInstanceRef, text: string) {
  const where = `jenkins instance ${instance.name}: token secret ${instance.token.path} (field ${instance.token.field})`;
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch {
    // The parser's message quotes the offending line, which may hold the token.
    throw new JenkinsSettingsError(`${where} is not valid TOML`);
  }
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) {
    const missing = parsed.error.issues.map((i) => i.path.join('.')).join(', ');
    throw new JenkinsSettingsError(
      `${where} needs a [jenkins] table with url, user and password (missing or not a string: ${missing})`,
    );
  }
  return parsed.data.jenkins;
}
