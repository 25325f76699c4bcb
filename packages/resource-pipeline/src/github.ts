import { Octokit } from '@octokit/rest';
import { gqlClient } from '@qontract/app-interface';
import { QontractError, type RunContext } from '@qontract/core';
import { GithubOrgsDocument } from './github.generated.ts';

/**
 * Reads files from GitHub for the `github(repo, path, ref)` template helper,
 * with the token of app-interface's default GitHub organisation and the API
 * at `GITHUB_API` (default api.github.com), as upstream. Files of 1 MiB and
 * more come through the blob API (the contents API leaves them empty).
 */
export function githubFileReader(
  ctx: RunContext,
): (repo: string, path: string, ref: string) => Promise<string> {
  let client: Promise<Octokit> | undefined;
  const octokit = () => {
    client ??= (async () => {
      const gql = await ctx.client(gqlClient);
      const { orgs } = await gql.query(GithubOrgsDocument);
      const org = (orgs ?? []).find((o) => o.default);
      if (!org)
        throw new QontractError(
          'github(): no default GitHub organisation (githuborg_v1 with default: true)',
        );
      const token = await ctx.secrets.read(org.token);
      return new Octokit({
        auth: token,
        baseUrl: ctx.env.vars.GITHUB_API || 'https://api.github.com',
        request: { retries: 0 },
      });
    })();
    return client;
  };
  return async (repo, path, ref) => {
    const [owner, name] = repo.split('/');
    if (!owner || !name)
      throw new QontractError(`github(): repository '${repo}' is not owner/name`);
    const api = await octokit();
    try {
      const { data } = await api.rest.repos.getContent({ owner, repo: name, path, ref });
      if (Array.isArray(data) || data.type !== 'file')
        throw new QontractError(`github(): ${repo}/${path}@${ref} is not a file`);
      if (data.encoding === 'base64' && data.content)
        return Buffer.from(data.content, 'base64').toString('utf8');
      const blob = await api.rest.git.getBlob({ owner, repo: name, file_sha: data.sha });
      return Buffer.from(blob.data.content, 'base64').toString('utf8');
    } catch (e) {
      if (e instanceof QontractError) throw e;
      const status = (e as { status?: number }).status;
      throw new QontractError(
        `github(): cannot read ${repo}/${path}@${ref}: ${status ? `HTTP ${status}` : String(e)}`,
      );
    }
  };
}
