import type { Octokit } from '@octokit/rest';
import { gqlClient } from '@qontract/app-interface';
import { errorMessage, type RunContext } from '@qontract/core';
import { defaultGithubOrg } from '@qontract/github';
import { type RefRequest, refKey } from './desired.ts';
import { IntegrationsManagerGithubDocument } from './github.generated.ts';

/**
 * Resolves each ref to its commit on GitHub (token of app-interface's default
 * GitHub organisation, API at `GITHUB_API`), as the original: the image tag
 * is the sha's first `hashLength` characters. A ref that cannot be resolved
 * maps to its error; the caller refuses that namespace.
 */
export async function resolveImageTags(
  ctx: RunContext,
  refs: readonly RefRequest[],
): Promise<Map<string, string | Error>> {
  const out = new Map<string, string | Error>();
  let api: Octokit;
  let hashLength: number;
  try {
    const gql = await ctx.client(gqlClient);
    const { settings } = await gql.query(IntegrationsManagerGithubDocument);
    hashLength = settings?.[0]?.hashLength ?? 7;
    api = await ctx.client(defaultGithubOrg);
  } catch (e) {
    for (const r of refs) out.set(refKey(r), new Error(errorMessage(e)));
    return out;
  }
  await Promise.all(
    refs.map(async (r) => {
      const [owner, repo] = r.repo.split('/');
      try {
        if (!owner || !repo) throw new Error(`'${r.repo}' is not a GitHub repository`);
        const { data } = await api.rest.repos.getCommit({ owner, repo, ref: r.ref });
        out.set(refKey(r), data.sha.slice(0, hashLength));
      } catch (e) {
        const status = (e as { status?: number }).status;
        out.set(refKey(r), new Error(status ? `HTTP ${status}` : errorMessage(e)));
      }
    }),
  );
  return out;
}
