import { getResource, gqlClient } from '@qontract/app-interface';
import type { RunContext } from '@qontract/core';
import { renderTemplate, type TemplateHelpers } from '@qontract/templating';
import { parse } from 'graphql';
import { Agent, fetch } from 'undici';
import { answerDigest, type HelperCall } from './desired-cache.ts';
import { githubFileReader } from './github.ts';
import type { TemplateRenderer } from './providers/index.ts';
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
  // Recording renders get their own vaultCache, so each one sees (and records) every secret
  // it reads; this memo keeps it to one Vault read per secret and run all the same.
  const vaultReads = new Map<string, Promise<Record<string, string>>>();
  const memoizedVault = (path: string, version: number | undefined) => {
    const key = JSON.stringify([path, version ?? null]);
    let read = vaultReads.get(key);
    if (!read) {
      read = ctx.secrets.readAll({ path, version });
      vaultReads.set(key, read);
    }
    return read;
  };
  const answering: Record<string, (...args: never[]) => Promise<unknown>> = {
    ...(helpers as Record<string, (...args: never[]) => Promise<unknown>>),
    vault: memoizedVault as (...args: never[]) => Promise<unknown>,
  };
  const render: TemplateRenderer = (body, { record, ...options }) => {
    if (!record)
      return renderTemplate(body, { ...options, helpers, vaultCache, redactor: ctx.redactor });
    const recording: Record<string, (...args: never[]) => Promise<unknown>> = {};
    for (const [name, helper] of Object.entries(answering)) {
      recording[name] = async (...args: never[]) => {
        const outcome = await settle(helper(...args));
        record.call({ helper: name, args, answer: digestOf(outcome) });
        if ('error' in outcome) throw outcome.thrown;
        return outcome.value;
      };
    }
    return renderTemplate(body, {
      ...options,
      helpers: recording as TemplateHelpers,
      vaultCache: new Map(),
      redactor: ctx.redactor,
      now: () => {
        record.clock();
        return new Date();
      },
    });
  };
  // Asks a recorded lookup again, answering with the same digest when nothing changed.
  const replay = async (call: HelperCall): Promise<string> => {
    const helper = answering[call.helper];
    if (!helper) return '';
    const outcome = await settle(helper(...(call.args as never[])));
    // A render would have registered the secret's values for masking; so does its replay.
    if (call.helper === 'vault' && 'value' in outcome && outcome.value) {
      for (const value of Object.values(outcome.value as Record<string, unknown>))
        if (typeof value === 'string') ctx.redactor.add(value);
    }
    return digestOf(outcome);
  };
  return Object.assign(render, { replay });
}

type Outcome = { value: unknown } | { error: string; thrown: unknown };

function digestOf(outcome: Outcome): string {
  return answerDigest('error' in outcome ? { error: outcome.error } : { value: outcome.value });
}

/** A helper's answer or failure, as data: a template may catch a failed lookup and go on. */
async function settle(answer: Promise<unknown>): Promise<Outcome> {
  try {
    return { value: await answer };
  } catch (e) {
    return { error: e instanceof Error ? `${e.name}: ${e.message}` : String(e), thrown: e };
  }
}
