import { errorMessage, QontractError, type RunContext } from '@qontract/core';

/**
 * Reads files from GitHub for the `github(repo, path, ref)` template helper,
 * with the token of app-interface's default GitHub organisation and the API
 * at `GITHUB_API` (default api.github.com), as upstream. Files of 1 MiB and
 * more come through the blob API (the contents API leaves them empty).
 */
export function githubFileReader(
  ctx: RunContext,
): (repo: string, path: string, ref: string) => Promise<string> {
  // Octokit is imported by the first template that reads GitHub, not by every pipeline run.
  const octokit = async () => {
    const { defaultGithubOrg } = await import('@qontract/github');
    return ctx.client(defaultGithubOrg).catch((e: unknown) => {
      throw new QontractError(`github(): ${errorMessage(e)}`);
    });
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
