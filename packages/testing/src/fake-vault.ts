import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An in-process Vault speaking the part of Vault's HTTP API the project uses:
 * KV v1 and v2 mounts, token / AppRole / Kubernetes auth, token lookup and the
 * KV v2 config endpoint used for version detection. Listing uses the
 * `?list=true` form (Node's HTTP parser rejects the LIST verb). Status codes and JSON
 * shapes follow Vault: `{data: ...}` envelopes, `{errors: [...]}` bodies,
 * 403 for a missing or bad token, 404 for a missing path or version.
 */
export interface FakeVaultOptions {
  /** KV mounts by name; `version` is the KV engine version. */
  readonly mounts?: Readonly<Record<string, { readonly version: 1 | 2 }>>;
  readonly approle?: { readonly roleId: string; readonly secretId: string };
  /** Kubernetes auth: logins with this role and JWT succeed. */
  readonly kubernetes?: { readonly role: string; readonly jwt: string; readonly mount?: string };
  /** Token that may do everything; a random one when not given. */
  readonly rootToken?: string;
  /** `lease_duration` of tokens issued by logins, in seconds. */
  readonly tokenTtlSeconds?: number;
}

interface FakeVaultRequest {
  readonly method: string;
  /** URL path and query, e.g. `/v1/app-sre/data/creds?version=2`. */
  readonly path: string;
  readonly status: number;
}

export interface FakeVault {
  readonly url: string;
  readonly rootToken: string;
  /** Every request answered, in order (never with tokens or bodies). */
  readonly requestLog: FakeVaultRequest[];
  /** Writes a secret at a full path (`mount/rest`); returns the new version (1 on KV v1). */
  put(path: string, data: Record<string, unknown>): number;
  /** The stored data at a path (latest or a given v2 version), or undefined. */
  get(path: string, version?: number): Record<string, unknown> | undefined;
  /** Marks a KV v2 version as deleted (reads of it then answer 404). */
  deleteVersion(path: string, version: number): void;
  /** Adds or changes a mount. */
  setMountVersion(mount: string, version: 1 | 2): void;
  /** Tokens issued by logins so far, oldest first. */
  readonly issuedTokens: readonly string[];
  /** Makes every issued (non-root) token invalid, as if it expired. */
  expireIssuedTokens(): void;
  /** Requests for secrets whose path (`mount/rest`) starts with this prefix answer 403. */
  forbid(pathPrefix: string): void;
  /** The next `count` requests answer `status` (a transient failure) before any handling. */
  failNext(count: number, status?: number): void;
  /** Clears the request log. */
  resetLog(): void;
  close(): Promise<void>;
}

interface V2Version {
  readonly data: Record<string, unknown>;
  readonly createdTime: string;
  deletionTime: string;
}

interface Mount {
  version: 1 | 2;
  readonly v1: Map<string, Record<string, unknown>>;
  readonly v2: Map<string, V2Version[]>;
}

interface Reply {
  readonly status: number;
  readonly body?: unknown;
}

const PERMISSION_DENIED: Reply = { status: 403, body: { errors: ['permission denied'] } };
const NOT_FOUND: Reply = { status: 404, body: { errors: [] } };

export async function startFakeVault(options: FakeVaultOptions = {}): Promise<FakeVault> {
  const rootToken = options.rootToken ?? `hvs.root-${randomBytes(12).toString('hex')}`;
  const ttl = options.tokenTtlSeconds ?? 3600;
  const mounts = new Map<string, Mount>();
  const setMountVersion = (name: string, version: 1 | 2) => {
    const existing = mounts.get(name);
    if (existing) existing.version = version;
    else mounts.set(name, { version, v1: new Map(), v2: new Map() });
  };
  for (const [name, m] of Object.entries(options.mounts ?? {})) setMountVersion(name, m.version);

  const validTokens = new Set<string>([rootToken]);
  const issuedTokens: string[] = [];
  const forbidden: string[] = [];
  const requestLog: FakeVaultRequest[] = [];
  let failures = { count: 0, status: 503 };
  const kubeMount = options.kubernetes?.mount ?? 'kubernetes';

  const splitPath = (full: string): { mount: Mount; mountName: string; rest: string } => {
    const clean = full.replace(/^\/+/, '');
    const slash = clean.indexOf('/');
    const mountName = slash < 0 ? clean : clean.slice(0, slash);
    const rest = slash < 0 ? '' : clean.slice(slash + 1);
    const mount = mounts.get(mountName);
    if (!mount) throw new Error(`fake vault: no mount '${mountName}' for '${full}'`);
    return { mount, mountName, rest };
  };

  const put = (path: string, data: Record<string, unknown>): number => {
    const { mount, rest } = splitPath(path);
    if (mount.version === 1) {
      mount.v1.set(rest, { ...data });
      return 1;
    }
    const versions = mount.v2.get(rest) ?? [];
    versions.push({ data: { ...data }, createdTime: new Date().toISOString(), deletionTime: '' });
    mount.v2.set(rest, versions);
    return versions.length;
  };

  const get = (path: string, version?: number): Record<string, unknown> | undefined => {
    const { mount, rest } = splitPath(path);
    if (mount.version === 1) return mount.v1.get(rest);
    const versions = mount.v2.get(rest);
    if (!versions?.length) return undefined;
    const entry = versions[(version ?? versions.length) - 1];
    return entry && !entry.deletionTime ? entry.data : undefined;
  };

  const issueToken = (): Reply => {
    const token = `hvs.${randomBytes(18).toString('base64url')}`;
    validTokens.add(token);
    issuedTokens.push(token);
    return {
      status: 200,
      body: envelope(null, {
        auth: {
          client_token: token,
          accessor: randomUUID(),
          policies: ['default'],
          token_policies: ['default'],
          metadata: {},
          lease_duration: ttl,
          renewable: true,
          entity_id: '',
          token_type: 'service',
          orphan: true,
        },
      }),
    };
  };

  const login = (authPath: string, body: Record<string, unknown>): Reply => {
    if (authPath === 'approle/login') {
      if (!options.approle) return NOT_FOUND;
      if (body.role_id !== options.approle.roleId || body.secret_id !== options.approle.secretId) {
        return { status: 400, body: { errors: ['invalid role or secret ID'] } };
      }
      return issueToken();
    }
    if (authPath === `${kubeMount}/login`) {
      if (!options.kubernetes) return NOT_FOUND;
      if (body.role !== options.kubernetes.role) {
        return { status: 400, body: { errors: [`invalid role name "${String(body.role)}"`] } };
      }
      if (body.jwt !== options.kubernetes.jwt) return PERMISSION_DENIED;
      return issueToken();
    }
    return NOT_FOUND;
  };

  const kvV2 = (
    method: string,
    mount: Mount,
    rest: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ): Reply => {
    if (rest === 'config' && method === 'GET') {
      return {
        status: 200,
        body: envelope({ cas_required: false, delete_version_after: '0s', max_versions: 0 }),
      };
    }
    const [kind, ...tail] = rest.split('/');
    const key = tail.join('/');
    const list = method === 'LIST' || query.get('list') === 'true';
    if (kind === 'metadata' && list) return listKeys([...mount.v2.keys()], key);
    if (kind === 'metadata' && method === 'GET') {
      const versions = mount.v2.get(key);
      if (!versions?.length) return NOT_FOUND;
      return { status: 200, body: envelope(metadataOf(versions)) };
    }
    if (kind !== 'data' || !key) return NOT_FOUND;
    if (method === 'GET') {
      const versions = mount.v2.get(key);
      if (!versions?.length) return NOT_FOUND;
      const wanted = query.has('version') ? Number(query.get('version')) : 0;
      const number = wanted > 0 ? wanted : versions.length;
      const entry = versions[number - 1];
      if (!entry) return NOT_FOUND;
      const metadata = versionMetadata(entry, number);
      if (entry.deletionTime) return { status: 404, body: envelope({ data: null, metadata }) };
      return { status: 200, body: envelope({ data: entry.data, metadata }) };
    }
    if (method === 'POST' || method === 'PUT') {
      const data = body.data;
      if (data === null || typeof data !== 'object' || Array.isArray(data)) {
        return { status: 400, body: { errors: ['no data provided'] } };
      }
      const versions = mount.v2.get(key) ?? [];
      const entry: V2Version = {
        data: { ...(data as Record<string, unknown>) },
        createdTime: new Date().toISOString(),
        deletionTime: '',
      };
      versions.push(entry);
      mount.v2.set(key, versions);
      return { status: 200, body: envelope(versionMetadata(entry, versions.length)) };
    }
    return { status: 405, body: { errors: ['unsupported operation'] } };
  };

  const kvV1 = (
    method: string,
    mount: Mount,
    rest: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ): Reply => {
    if (method === 'LIST' || (method === 'GET' && query.get('list') === 'true')) {
      return listKeys([...mount.v1.keys()], rest);
    }
    if (!rest) return NOT_FOUND;
    if (method === 'GET') {
      const data = mount.v1.get(rest);
      return data ? { status: 200, body: envelope(data) } : NOT_FOUND;
    }
    if (method === 'POST' || method === 'PUT') {
      mount.v1.set(rest, { ...body });
      return { status: 204 };
    }
    if (method === 'DELETE') {
      mount.v1.delete(rest);
      return { status: 204 };
    }
    return { status: 405, body: { errors: ['unsupported operation'] } };
  };

  const handle = (
    method: string,
    path: string,
    query: URLSearchParams,
    token: string | undefined,
    body: Record<string, unknown>,
  ): Reply => {
    if (!path.startsWith('/v1/')) return NOT_FOUND;
    const apiPath = path.slice('/v1/'.length);
    if (apiPath.startsWith('auth/') && apiPath.endsWith('/login') && method === 'POST') {
      return login(apiPath.slice('auth/'.length), body);
    }
    if (token === undefined || !validTokens.has(token)) return PERMISSION_DENIED;
    if (apiPath === 'auth/token/lookup-self') {
      return {
        status: 200,
        body: envelope({ id: token, policies: token === rootToken ? ['root'] : ['default'] }),
      };
    }
    const tune = /^sys\/mounts\/(.+)\/tune$/.exec(apiPath);
    if (tune && method === 'GET') {
      const mount = mounts.get(tune[1] ?? '');
      if (!mount) return { status: 400, body: { errors: ['cannot fetch sysview for path'] } };
      return {
        status: 200,
        body: envelope({
          default_lease_ttl: 2764800,
          max_lease_ttl: 2764800,
          force_no_cache: false,
          options: { version: String(mount.version) },
        }),
      };
    }
    const preflight = /^sys\/internal\/ui\/mounts\/([^/]+)/.exec(apiPath);
    if (preflight && method === 'GET') {
      const mount = mounts.get(preflight[1] ?? '');
      if (!mount) return PERMISSION_DENIED;
      return {
        status: 200,
        body: envelope({
          path: `${preflight[1]}/`,
          type: 'kv',
          options: { version: String(mount.version) },
        }),
      };
    }
    const slash = apiPath.indexOf('/');
    const mountName = slash < 0 ? apiPath : apiPath.slice(0, slash);
    const rest = slash < 0 ? '' : apiPath.slice(slash + 1);
    const mount = mounts.get(mountName);
    if (!mount) {
      return {
        status: 404,
        body: { errors: [`no handler for route "${apiPath}". route entry not found.`] },
      };
    }
    // Policies in tests name secrets as app-interface does (`mount/rest`), not v2 API paths.
    const secretPath =
      mount.version === 2 ? `${mountName}/${rest.replace(/^(data|metadata)\//, '')}` : apiPath;
    if (forbidden.some((prefix) => secretPath.startsWith(prefix))) return PERMISSION_DENIED;
    return mount.version === 2
      ? kvV2(method, mount, rest, query, body)
      : kvV1(method, mount, rest, query, body);
  };

  const server = createServer((req, res) => {
    void respond(req, res);
  });

  const respond = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake-vault');
    const method = req.method ?? 'GET';
    let reply: Reply;
    const raw = await readBody(req);
    if (failures.count > 0) {
      failures = { ...failures, count: failures.count - 1 };
      reply = { status: failures.status, body: { errors: ['injected failure'] } };
    } else {
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        reply = { status: 400, body: { errors: ['failed to parse JSON input'] } };
      }
      const header = req.headers['x-vault-token'];
      const token = Array.isArray(header) ? header[0] : header;
      reply ??= handle(method, url.pathname, url.searchParams, token, body);
    }
    requestLog.push({ method, path: url.pathname + url.search, status: reply.status });
    if (reply.body === undefined) {
      res.writeHead(reply.status).end();
    } else {
      res
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(reply.body));
    }
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    rootToken,
    requestLog,
    put,
    get,
    deleteVersion(path, version) {
      const { mount, rest } = splitPath(path);
      const entry = mount.v2.get(rest)?.[version - 1];
      if (!entry) throw new Error(`fake vault: no version ${version} of '${path}'`);
      entry.deletionTime = new Date().toISOString();
    },
    setMountVersion,
    issuedTokens,
    expireIssuedTokens() {
      for (const token of issuedTokens) validTokens.delete(token);
    },
    forbid(pathPrefix) {
      forbidden.push(pathPrefix.replace(/^\/+/, ''));
    },
    failNext(count, status = 503) {
      failures = { count, status };
    },
    resetLog() {
      requestLog.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function envelope(data: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    request_id: randomUUID(),
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data,
    wrap_info: null,
    warnings: null,
    auth: null,
    ...extra,
  };
}

function versionMetadata(entry: V2Version, version: number): Record<string, unknown> {
  return {
    created_time: entry.createdTime,
    custom_metadata: null,
    deletion_time: entry.deletionTime,
    destroyed: false,
    version,
  };
}

function metadataOf(versions: readonly V2Version[]): Record<string, unknown> {
  const byNumber: Record<string, unknown> = {};
  versions.forEach((v, i) => {
    byNumber[String(i + 1)] = {
      created_time: v.createdTime,
      deletion_time: v.deletionTime,
      destroyed: false,
    };
  });
  return {
    cas_required: false,
    created_time: versions[0]?.createdTime,
    current_version: versions.length,
    custom_metadata: null,
    delete_version_after: '0s',
    max_versions: 0,
    oldest_version: 0,
    updated_time: versions.at(-1)?.createdTime,
    versions: byNumber,
  };
}

/** Vault's LIST: the direct children of `prefix`, folders with a trailing `/`. */
function listKeys(paths: readonly string[], prefix: string): Reply {
  const base = prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix;
  const keys = new Set<string>();
  for (const p of paths) {
    if (!p.startsWith(base)) continue;
    const tail = p.slice(base.length);
    const slash = tail.indexOf('/');
    keys.add(slash < 0 ? tail : tail.slice(0, slash + 1));
  }
  if (keys.size === 0) return NOT_FOUND;
  return { status: 200, body: envelope({ keys: [...keys].sort() }) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
