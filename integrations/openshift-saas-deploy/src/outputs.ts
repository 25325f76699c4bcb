import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, executeActions, QontractError, type RunContext } from '@qontract/core';
import { pyJsonDumps } from '@qontract/pycompat';
import { repoSourcesForRun, type SaasFile } from '@qontract/saas';

/** The triggers whose deploys feed the pipeline's scans (the original's `allowed_integration`). */
const SCANNED_TRIGGERS = new Set([
  'openshift-saas-deploy-trigger-upstream-jobs',
  'openshift-saas-deploy-trigger-images',
]);

interface OutputFile {
  readonly name: string;
  readonly content: string;
  /** Registry credentials: readable by the pipeline's user only, never logged. */
  readonly secret?: boolean;
}

/**
 * The files the deploy's pipeline reads after a deploy that a new build
 * triggered (the original writes them after a successful run of one saas
 * file, not in dry-run): `sast` (the source archive of the commit the reason
 * names, and the service owners to tell), `clamav` (the images deployed and
 * the app), and `dockerconfigjson` (the saas file's image credentials, when
 * its secret names a registry `url`, for the next task to pull the images).
 */
export async function writeTriggerOutputs(
  ctx: RunContext,
  saasFile: SaasFile,
  o: {
    readonly ioDir: string;
    readonly triggerIntegration?: string | undefined;
    readonly triggerReason?: string | undefined;
    readonly images: readonly string[];
  },
): Promise<void> {
  if (!o.triggerIntegration || !SCANNED_TRIGGERS.has(o.triggerIntegration) || !o.triggerReason)
    return;
  const files = await outputFiles(ctx, saasFile, { ...o, triggerReason: o.triggerReason });
  await mkdir(o.ioDir, { recursive: true });
  await executeActions(ctx, [files], {
    name: () => 'write_io_dir',
    sideEffect: true,
    describe: (fs) => `writing ${fs.map((f) => f.name).join(', ')} in ${o.ioDir}`,
    destructive: () => false,
    execute: async (fs) => {
      for (const f of fs) {
        await writeFile(join(o.ioDir, f.name), f.content, f.secret ? { mode: 0o600 } : {});
      }
    },
    failure: (_fs, e) => ({
      scope: 'io-dir',
      message: `writing the trigger outputs in ${o.ioDir} failed: ${errorMessage(e)}`,
    }),
  });
}

async function outputFiles(
  ctx: RunContext,
  saasFile: SaasFile,
  o: { readonly triggerReason: string; readonly images: readonly string[] },
): Promise<OutputFile[]> {
  // The reason starts with `<repository url>/commit/<sha>` (both scanned triggers write it so).
  const [url, sha, ...rest] = (o.triggerReason.split(' ')[0] ?? '').split('/commit/');
  if (!url || !sha || rest.length > 0) {
    throw new QontractError(
      `saas file ${saasFile.name}: --trigger-reason must start with <repository url>/commit/<sha>`,
    );
  }
  const sources = repoSourcesForRun(ctx, { codeAuth: saasFile.authentication?.code ?? null });
  const archive = await sources.archive(url, sha);
  const emails = (saasFile.app.serviceOwners ?? []).map((owner) => owner.email).join(' ');
  const files: OutputFile[] = [
    { name: 'sast', content: `${archive.file}\n${archive.url}\n${emails}\n` },
    { name: 'clamav', content: `${o.images.join(' ')}\n${saasFile.app.name}\n` },
  ];
  const dockerConfig = await dockerConfigJson(ctx, saasFile);
  if (dockerConfig !== undefined) {
    files.push({ name: 'dockerconfigjson', content: dockerConfig, secret: true });
  }
  return files;
}

/**
 * The saas file's image credentials as a docker config (the original's
 * `get_docker_config_json`, `json.dumps(sort_keys=True, indent=2)`): the
 * secret's `.dockerconfigjson`, or `{"auths": {url: {"auth": base64(user:token)}}}`;
 * only when the secret has a `url`.
 */
async function dockerConfigJson(ctx: RunContext, saasFile: SaasFile): Promise<string | undefined> {
  const ref = saasFile.authentication?.image;
  if (!ref) return undefined;
  const creds = await ctx.secrets.readAll({ path: ref.path, version: ref.version ?? null });
  const usable = ('user' in creds && 'token' in creds) || '.dockerconfigjson' in creds;
  if (!usable || !creds.url) return undefined;
  let config: unknown;
  try {
    config = JSON.parse(creds['.dockerconfigjson'] || '{}');
  } catch {
    // Its message would quote the secret.
    throw new QontractError(
      `image authentication secret ${ref.path}: .dockerconfigjson is not valid JSON`,
    );
  }
  if (config === null || typeof config !== 'object' || Object.keys(config).length === 0) {
    const auth = Buffer.from(`${creds.user}:${creds.token}`).toString('base64');
    config = { auths: { [creds.url]: { auth } } };
  }
  return pyJsonDumps(config, { indent: 2, sortKeys: true });
}
