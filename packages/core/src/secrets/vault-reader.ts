import { isDeepStrictEqual } from 'node:util';
import { QontractError } from '../errors.ts';
import type { SecretRedactor } from '../redaction.ts';
import {
  SecretAccessForbiddenError,
  SecretFieldNotFoundError,
  SecretNotFoundError,
  type SecretPathRef,
  type SecretReader,
  type SecretRef,
  SecretVersionNotFoundError,
  type SecretWriter,
  VaultAuthenticationError,
  VaultConnectionError,
} from './types.ts';
import {
  VaultClient,
  type VaultClientOptions,
  type VaultResponse,
  vaultErrors,
} from './vault-client.ts';

export type KvVersion = 1 | 2;

export interface VaultWriteOptions {
  /** Write even when the KV v2 secret already holds exactly this data. */
  readonly force?: boolean;
  /**
   * Base64-decode every value before writing. Upstream's `write()` does this by
   * default; here it is opt-in so a plain value is never decoded by surprise.
   */
  readonly decodeBase64?: boolean;
}

export type VaultSecretReaderOptions = VaultClientOptions & {
  readonly redactor: SecretRedactor;
};

/**
 * Reads and writes Vault KV secrets the way the original does: the first path
 * segment is the mount, whose KV version is detected once; v2 reads take an
 * optional version (none = latest); `format: base64` decodes single reads.
 * Whole secrets are cached per run by (path, version) until written. Every
 * value read is registered with the run's redactor.
 */
export class VaultSecretReader implements SecretReader, SecretWriter {
  readonly #client: VaultClient;
  readonly #redactor: SecretRedactor;
  readonly #kvVersions = new Map<string, Promise<KvVersion>>();
  readonly #cache = new Map<string, Promise<Record<string, string>>>();

  constructor(options: VaultSecretReaderOptions) {
    this.#redactor = options.redactor;
    this.#client = new VaultClient(options);
  }

  get client(): VaultClient {
    return this.#client;
  }

  async read(ref: SecretRef): Promise<string> {
    const data = await this.readAll({ path: ref.path, version: ref.version });
    const value = data[ref.field];
    if (value === undefined) {
      throw new SecretFieldNotFoundError(
        `secret field not found: ${ref.path}/${ref.field} (version: ${describeVersion(ref.version)})`,
      );
    }
    if (ref.format !== 'base64') return value;
    return this.#decodeBase64(value, `${ref.path}/${ref.field}`);
  }

  /** All fields of a secret; `format` does not apply here, as upstream. */
  readAll(ref: SecretPathRef): Promise<Record<string, string>> {
    const key = cacheKey(ref.path, ref.version);
    let entry = this.#cache.get(key);
    if (!entry) {
      const created = this.#fetchAll(ref.path, ref.version ?? undefined);
      this.#cache.set(key, created);
      // A failure is not remembered: the next read asks Vault again.
      created.catch(() => {
        if (this.#cache.get(key) === created) this.#cache.delete(key);
      });
      entry = created;
    }
    return entry.then((data) => ({ ...data }));
  }

  async write(
    path: string,
    data: Record<string, string>,
    options: VaultWriteOptions = {},
  ): Promise<void> {
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) {
      values[k] = options.decodeBase64 ? this.#decodeBase64(v, `${path}/${k}`) : v;
      this.#redactor.add(values[k]);
    }
    const { mount, rest } = splitSecretPath(path);
    const context = `cannot write secret ${path}`;
    const version = await inContext(context, () => this.kvVersion(mount));
    let response: VaultResponse;
    if (version === 2) {
      if (!options.force) {
        const current = await this.#fetchRaw(path, undefined).catch((e: unknown) => {
          if (e instanceof SecretNotFoundError) return undefined;
          throw e;
        });
        if (current !== undefined && isDeepStrictEqual(current, values)) return;
      }
      response = await inContext(context, () =>
        this.#client.request('POST', `${mount}/data/${rest}`, { data: values }),
      );
    } else {
      response = await inContext(context, () =>
        this.#client.request('POST', `${mount}/${rest}`, values),
      );
    }
    this.#invalidate(path);
    if (response.status === 403) throw forbidden(path);
    if (response.status !== 200 && response.status !== 204) {
      throw new VaultConnectionError(
        `writing secret '${path}' failed: HTTP ${response.status}${vaultErrors(response.body)}`,
      );
    }
  }

  /** Names directly under `path` (sub-folders end with `/`); empty when there are none. */
  async list(path: string): Promise<string[]> {
    const clean = path.replace(/^\/+|\/+$/g, '');
    const slash = clean.indexOf('/');
    const mount = slash < 0 ? clean : clean.slice(0, slash);
    const rest = slash < 0 ? '' : clean.slice(slash + 1);
    const context = `cannot list ${clean}`;
    const kv = await inContext(context, () => this.kvVersion(mount));
    const base = kv === 2 ? `${mount}/metadata` : mount;
    const response = await inContext(context, () =>
      this.#client.request('GET', `${rest ? `${base}/${rest}` : base}?list=true`),
    );
    if (response.status === 404) return [];
    if (response.status === 403) throw forbidden(clean);
    const keys = (response.body as { data?: { keys?: unknown } } | undefined)?.data?.keys;
    if (response.status !== 200 || !Array.isArray(keys)) {
      throw new VaultConnectionError(
        `listing '${clean}' failed: HTTP ${response.status}${vaultErrors(response.body)}`,
      );
    }
    return keys.map(String);
  }

  /** Every secret path below `path`, recursively (upstream `list_all`). */
  async listAll(path: string): Promise<string[]> {
    const clean = path.replace(/^\/+|\/+$/g, '');
    const out: string[] = [];
    for (const key of await this.list(clean)) {
      const full = `${clean}/${key}`;
      if (key.endsWith('/')) out.push(...(await this.listAll(full)));
      else out.push(full);
    }
    return out;
  }

  /** Deletes a KV v1 secret; upstream offers no delete for KV v2 either. */
  async delete(path: string): Promise<void> {
    const { mount, rest } = splitSecretPath(path);
    const context = `cannot delete secret ${path}`;
    if ((await inContext(context, () => this.kvVersion(mount))) !== 1) {
      throw new QontractError(`deleting '${path}' is only supported on KV v1 mounts`);
    }
    const response = await inContext(context, () =>
      this.#client.request('DELETE', `${mount}/${rest}`),
    );
    this.#invalidate(path);
    if (response.status === 403) throw forbidden(path);
    if (response.status !== 204 && response.status !== 200 && response.status !== 404) {
      throw new VaultConnectionError(
        `deleting secret '${path}' failed: HTTP ${response.status}${vaultErrors(response.body)}`,
      );
    }
  }

  /**
   * The KV engine version of a mount: v2 when its `config` endpoint answers
   * with a v2 configuration, v1 when it is not found, as upstream. A token
   * that may not read the configuration falls back to the mount preflight
   * Vault's own CLI uses, which any token with access below the mount may read.
   */
  kvVersion(mount: string): Promise<KvVersion> {
    let entry = this.#kvVersions.get(mount);
    if (!entry) {
      const created = this.#detectKvVersion(mount);
      this.#kvVersions.set(mount, created);
      created.catch(() => {
        if (this.#kvVersions.get(mount) === created) this.#kvVersions.delete(mount);
      });
      entry = created;
    }
    return entry;
  }

  async #detectKvVersion(mount: string): Promise<KvVersion> {
    const config = await this.#client.request('GET', `${mount}/config`);
    if (config.status !== 403) return isKvV2Config(config);
    const preflight = await this.#client.request('GET', `sys/internal/ui/mounts/${mount}`);
    const options = (preflight.body as { data?: { options?: { version?: unknown } | null } })?.data
      ?.options;
    if (preflight.status !== 200) {
      throw new SecretAccessForbiddenError(
        `permission denied detecting the KV version of mount '${mount}'`,
      );
    }
    return options?.version === '2' ? 2 : 1;
  }

  async #fetchAll(path: string, version: number | undefined): Promise<Record<string, string>> {
    const raw = await this.#fetchRaw(path, version);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw)) {
      if (v === null || v === undefined) continue;
      out[k] = stringValue(v);
      this.#redactor.add(out[k]);
    }
    return out;
  }

  async #fetchRaw(path: string, version: number | undefined): Promise<Record<string, unknown>> {
    const { mount, rest } = splitSecretPath(path);
    const context = `cannot read secret ${path}`;
    const kv = await inContext(context, () => this.kvVersion(mount));
    const apiPath =
      kv === 2
        ? `${mount}/data/${rest}${version !== undefined ? `?version=${version}` : ''}`
        : `${mount}/${rest}`;
    // Only a 404 means "not found": no answer at all is a VaultConnectionError.
    const response = await inContext(context, () => this.#client.request('GET', apiPath));
    if (response.status === 403) throw forbidden(path);
    const envelope = (response.body ?? {}) as { data?: unknown };
    const data = kv === 2 ? (envelope.data as { data?: unknown } | null)?.data : envelope.data;
    if (response.status === 404 || (response.status === 200 && !isRecord(data))) {
      if (kv === 2 && version !== undefined) {
        throw new SecretVersionNotFoundError(
          `version '${version}' not found for secret with path '${path}'`,
        );
      }
      throw new SecretNotFoundError(`secret not found: ${path}`);
    }
    if (response.status !== 200) {
      throw new VaultConnectionError(
        `reading secret '${path}' failed: HTTP ${response.status}${vaultErrors(response.body)}`,
      );
    }
    return data as Record<string, unknown>;
  }

  #decodeBase64(value: string, where: string): string {
    const compact = value.replace(/\s+/g, '');
    // Buffer.from silently drops bad characters; Python's b64decode refuses them, so do we.
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
      throw new SecretNotFoundError(`secret ${where} is not valid base64`);
    }
    const decoded = Buffer.from(compact, 'base64').toString('utf8');
    this.#redactor.add(decoded);
    return decoded;
  }

  #invalidate(path: string): void {
    const prefix = `${path}@`;
    for (const key of this.#cache.keys()) if (key.startsWith(prefix)) this.#cache.delete(key);
  }
}

/**
 * Puts the secret operation in front of a failure to reach or log in to
 * Vault, whose message names only the server and the API call.
 */
async function inContext<T>(context: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof VaultConnectionError) {
      throw new VaultConnectionError(`${context}: ${e.message}`, { cause: e });
    }
    if (e instanceof VaultAuthenticationError) {
      throw new VaultAuthenticationError(`${context}: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

function splitSecretPath(path: string): { mount: string; rest: string } {
  const clean = path.replace(/^\/+/, '');
  const slash = clean.indexOf('/');
  if (slash <= 0 || slash === clean.length - 1) {
    throw new SecretNotFoundError(`invalid secret path '${path}': expected <mount>/<path>`);
  }
  return { mount: clean.slice(0, slash), rest: clean.slice(slash + 1) };
}

function isKvV2Config(response: VaultResponse): KvVersion {
  if (response.status !== 200) return 1;
  const data = (response.body as { data?: unknown } | undefined)?.data;
  // A KV v1 mount answers `<mount>/config` too when a secret is named `config`;
  // only a v2 engine configuration carries `max_versions`.
  return isRecord(data) && 'max_versions' in data ? 2 : 1;
}

function forbidden(path: string): SecretAccessForbiddenError {
  return new SecretAccessForbiddenError(`permission denied accessing secret '${path}'`);
}

function cacheKey(path: string, version: number | null | undefined): string {
  return `${path}@${version ?? 'LATEST'}`;
}

function describeVersion(version: number | null | undefined): string {
  return version === null || version === undefined ? 'latest' : String(version);
}

/** Vault KV values are JSON; non-strings become their JSON text so callers always get strings. */
function stringValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
