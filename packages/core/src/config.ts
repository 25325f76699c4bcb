import { readFile } from 'node:fs/promises';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { ConfigError } from './errors.ts';

/**
 * `config.toml`, the original's format. Known sections are validated; every
 * other table is kept as it is (integrations and the config-file secret reader
 * read them).
 */
const graphqlSection = z.object({
  /**
   * qontract-server URL (`https://host/graphql`), or an embedded backend:
   * `file://PATH` (an app-interface checkout or a `bundle.json`), resolved
   * against the config file's directory when relative.
   */
  server: z.string().min(1),
  /** Sent verbatim as the `Authorization` header, as the original does. */
  token: z.string().optional(),
});

const vaultSection = z
  .object({
    server: z.string().min(1),
    role_id: z.string().optional(),
    secret_id: z.string().optional(),
    token: z.string().optional(),
    kube_auth_role: z.string().optional(),
    kube_auth_mount: z.string().optional(),
  })
  .loose();

const githubOrg = z.object({ token: z.string() }).loose();

const gitlabSection = z
  .object({ url: z.string().optional(), token: z.string().optional() })
  .loose();

/** Our addition: where the state store lives when no S3 env/settings are given. */
const stateSection = z
  .object({
    provider: z.enum(['s3', 'local']).optional(),
    bucket: z.string().optional(),
    region: z.string().optional(),
    endpoint: z.string().optional(),
    path: z.string().optional(),
  })
  .loose();

const configSchema = z
  .object({
    graphql: graphqlSection,
    vault: vaultSection.optional(),
    github: z.record(z.string(), githubOrg).optional(),
    gitlab: gitlabSection.optional(),
    state: stateSection.optional(),
    'qontract-api': z
      .object({ server: z.string(), token: z.string().optional() })
      .loose()
      .optional(),
  })
  .loose();

export type Config = z.infer<typeof configSchema> & {
  /** Absolute path of the file the config was read from (empty for in-memory configs). */
  readonly sourcePath: string;
  /** The whole TOML document, for opaque sections and the config-file secret reader. */
  readonly raw: Readonly<Record<string, unknown>>;
};

/** Reads and validates a config file; every problem is listed in one ConfigError. */
export async function loadConfig(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `config file not found: ${path}`
        : `cannot read config file ${path}: ${code ?? e}`,
    );
  }
  return parseConfig(text, path);
}

export function parseConfig(text: string, sourcePath = ''): Config {
  const where = sourcePath || 'config';
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      const firstLine = e.message.split('\n')[0] ?? e.message;
      throw new ConfigError(`${where}:${e.line}:${e.column}: invalid TOML: ${firstLine}`);
    }
    throw new ConfigError(`${where}: invalid TOML: ${String(e)}`);
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => describeIssue(issue, raw));
    throw new ConfigError(`${where}: invalid configuration`, problems);
  }
  return Object.assign(result.data, { sourcePath, raw });
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const key = issue.path.map(String).join('.') || '(top level)';
  if (issue.code === 'invalid_type') {
    const actual = valueAt(raw, issue.path);
    const found = actual === undefined ? 'nothing (the key is missing)' : tomlTypeName(actual);
    return `${key}: expected ${issue.expected}, found ${found}`;
  }
  if (issue.code === 'invalid_value') {
    return `${key}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (issue.code === 'too_small') return `${key}: must not be empty`;
  return `${key}: ${issue.message}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur = root;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function tomlTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'date';
  if (typeof value === 'object' && value !== null) return 'table';
  if (typeof value === 'bigint') return 'integer';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'float';
  return typeof value;
}

/** Builds a Config in memory (tests, the demo). */
export function configFromObject(raw: Record<string, unknown>, sourcePath = ''): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(
      'invalid configuration',
      result.error.issues.map((i) => describeIssue(i, raw)),
    );
  }
  return Object.assign(result.data, { sourcePath, raw });
}
