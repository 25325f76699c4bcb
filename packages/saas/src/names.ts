/** A 40-hex commit sha (lowercase, as the original's `is_commit_sha`). */
export function isCommitSha(ref: string): boolean {
  return /^[0-9a-f]{40}$/.test(ref);
}

/** Tekton's 63-character limit minus 7 for the rerun suffix. */
const PIPELINE_RUN_NAME_LENGTH = 56;

/**
 * The PipelineRun name of a saas file in an environment: `<saas>-<env>` cut to
 * 56 characters, trailing `-` removed (`short`), and the uncut `long` one.
 */
export function saasFileEnvCombo(
  saasFileName: string,
  envName: string,
): { short: string; long: string } {
  const long = `${saasFileName}-${envName}`;
  return { short: long.slice(0, PIPELINE_RUN_NAME_LENGTH).replace(/-+$/, ''), long };
}

function components(path: string): string[] {
  const absolute = path.startsWith('/');
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  return absolute ? ['/', ...parts] : parts;
}

/**
 * Whether a secret path equals or lies below `allowed`, component-wise
 * (Python's `os.path.commonpath([path, allowed]) == allowed`): `a/b/c` is
 * below `a/b`, `a/bc` is not; a trailing `/` in `allowed` never matches, as
 * commonpath normalizes it away.
 */
export function secretPathAllowed(path: string, allowed: string): boolean {
  const p = components(path);
  const a = components(allowed);
  // commonpath refuses to mix absolute and relative paths (a ValueError upstream).
  if ((p[0] === '/') !== (a[0] === '/')) return false;
  const common: string[] = [];
  for (let i = 0; i < Math.min(p.length, a.length) && p[i] === a[i]; i++) common.push(p[i] ?? '');
  const joined = common[0] === '/' ? `/${common.slice(1).join('/')}` : common.join('/');
  return joined === allowed;
}
