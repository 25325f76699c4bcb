import { getResource, gqlClient } from '@qontract/app-interface';
import type { RunContext } from '@qontract/core';
import { renderTemplate, type TemplateHelpers } from '@qontract/templating';
import { parse } from 'graphql';
import { Agent, fetch } from 'undici';
import { githubFileReader } from './github.ts';
import type { TemplateRenderer } from './providers.ts';
import { s3Helpers } from './s3.ts';

/** `url()` ignores TLS verification, as upstream's helper does. */
const insecureAgent = new Agent({ connect: { rejectUnauthorized: false } });

/**
 * The sandboxed template renderer of a run, with the helpers wired to the
 * run's clients: `vault` → the secret reader (cached per run), `query` → the
 * app-interface client (schema allow-list applies), `url` → an HTTP GET.
 * `github` → the default GitHub organisation's token; `s3` / `s3_ls` → the
 * named app-interface AWS account's automation credentials.
 */
export function templateRendererFor(ctx: RunContext): TemplateRenderer {
  const s3 = s3Helpers(ctx);
  const vaultCache = new Map<string, Promise<Record<string, string> | null>>();
  const helpers: TemplateHelpers = {
    vault: (path, version) => ctx.secrets.readAll({ path, version }),
    resource: async (path) => (await getResource(await ctx.client(gqlClient), path)).content,
    graphql: async (query) => {
      const gql = await ctx.client(gqlClient);
      return (await gql.query(parse(query) as Parameters<typeof gql.query>[0])) as Record<
        string,
        unknown
      >;
    },
    github: githubFileReader(ctx),
    s3: s3.s3,
    s3Ls: s3.s3Ls,
    url: async (url) => {
      try {
        const response = await fetch(url, {
          dispatcher: insecureAgent,
          signal: AbortSignal.timeout(60_000),
        });
        await response.body?.cancel();
        return response.status < 404;
      } catch {
        return false;
      }
    },
  };
  return (body, options) =>
    renderTemplate(body, { ...options, helpers, vaultCache, redactor: ctx.redactor });
}
