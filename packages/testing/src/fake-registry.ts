import { createHash, randomBytes } from 'node:crypto';
import { type FakeRequest, type FakeResponse, type HttpFake, startHttpFake } from './http-fake.ts';

/**
 * An in-process container registry speaking the read side of the Docker
 * Registry HTTP API V2 / OCI distribution spec the way Quay.io and Docker Hub
 * do: `GET /v2/`, `GET`/`HEAD /v2/<name>/manifests/<tag|digest>` with
 * `Accept` negotiation, `Docker-Content-Digest`, the spec's error bodies
 * (`MANIFEST_UNKNOWN`, `NAME_UNKNOWN`, `UNAUTHORIZED`), and token auth: every
 * `/v2/` request needs a Bearer token from `GET /v2/auth` (Quay's realm path),
 * which takes Basic credentials (user + password or robot token) or none
 * (an anonymous token, good for public repositories only). A token is good
 * only for the repositories of the `scope` it was asked for. With
 * `auth: 'basic'` it is a plain htpasswd registry instead: Basic credentials
 * on every request, public repositories open to anyone. Plain HTTP on
 * 127.0.0.1: image references start with `host`.
 */
export interface FakeRegistryOptions {
  /** `bearer` (Quay, Docker Hub; default) or `basic` (a registry behind htpasswd). */
  readonly auth?: 'bearer' | 'basic';
  /** Accounts: user (or robot, `org+name`) → password (or robot token). */
  readonly users?: Readonly<Record<string, string>>;
  /** A fixed port (the demo); a free one when absent. */
  readonly port?: number;
}

/**
 * What `pushImage` stores: a generated single-arch manifest (`docker`: Docker
 * v2 schema 2, `oci`: OCI image manifest), a generated multi-arch one
 * (`docker-list`: manifest list, `oci-index`: OCI image index, each of a
 * linux/amd64 and a linux/arm64 image), or a given manifest object (its
 * `mediaType` field says its type; OCI manifest when absent).
 */
type FakeManifest = 'docker' | 'oci' | 'docker-list' | 'oci-index' | Record<string, unknown>;

export interface FakeRegistry extends HttpFake {
  /** `127.0.0.1:PORT`: the registry part of image references. */
  readonly host: string;
  /**
   * Stores a manifest under `name:tag` (creating the repository) and returns
   * its digest. Each push of a generated manifest is a new image (a new
   * digest). `private` sets the repository's visibility (public by default).
   */
  pushImage(
    name: string,
    tag: string,
    options?: { readonly private?: boolean; readonly manifest?: FakeManifest },
  ): string;
  /** Points `toTag` at the manifest `fromTag` points at; returns its digest. */
  retag(name: string, fromTag: string, toTag: string): string;
  /** Removes a tag (its manifest stays reachable by digest). */
  deleteTag(name: string, tag: string): void;
  /** Adds or changes an account. */
  addUser(username: string, password: string): void;
}

const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';

interface StoredManifest {
  readonly mediaType: string;
  readonly bytes: Buffer;
  /** Single-arch manifests of a list or index, by platform (`linux/amd64`). */
  readonly children?: ReadonlyMap<string, string>;
}

interface Repository {
  private: boolean;
  readonly tags: Map<string, string>;
  readonly manifests: Map<string, StoredManifest>;
}

interface Token {
  readonly username: string | undefined;
  /** Repositories this token may pull. */
  readonly pull: ReadonlySet<string>;
}

const sha256 = (data: Buffer | string) =>
  `sha256:${createHash('sha256').update(data).digest('hex')}`;
const MANIFEST_PATH = /^\/v2\/(.+)\/manifests\/([^/]+)$/;

export async function startFakeRegistry(options: FakeRegistryOptions = {}): Promise<FakeRegistry> {
  const mode = options.auth ?? 'bearer';
  const users = new Map(Object.entries(options.users ?? {}));
  const repositories = new Map<string, Repository>();
  const tokens = new Map<string, Token>();
  let pushes = 0;
  // Filled once the server listens (the challenge names the realm URL).
  const where = { url: '', host: '' };

  const basicUser = (req: FakeRequest): { user?: string; bad: boolean } => {
    const header = req.headers.authorization;
    if (!header?.startsWith('Basic ')) return { bad: false };
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    if (colon < 0 || users.get(user) !== password) return { bad: true };
    return { user, bad: false };
  };
  const bearer = (req: FakeRequest): Token | undefined => {
    const header = req.headers.authorization;
    return header?.startsWith('Bearer ') ? tokens.get(header.slice(7)) : undefined;
  };
  const mayPull = (name: string, user: string | undefined) =>
    !repositories.get(name)?.private || user !== undefined;

  const unauthorized = (name: string | undefined, insufficientScope: boolean): FakeResponse => {
    const challenge =
      mode === 'basic'
        ? 'Basic realm="fake-registry"'
        : [
            `Bearer realm="${where.url}/v2/auth"`,
            `service="${where.host}"`,
            ...(name === undefined ? [] : [`scope="repository:${name}:pull"`]),
            ...(insufficientScope ? ['error="insufficient_scope"'] : []),
          ].join(',');
    return {
      status: 401,
      headers: { 'WWW-Authenticate': challenge },
      body: registryError(
        'UNAUTHORIZED',
        'authentication required',
        name === undefined ? null : [{ Type: 'repository', Name: name, Action: 'pull' }],
      ),
    };
  };

  const token = (req: FakeRequest): FakeResponse => {
    const basic = basicUser(req);
    if (basic.bad) {
      return { status: 401, body: registryError('UNAUTHORIZED', 'Invalid Username or Password') };
    }
    const pull = new Set<string>();
    for (const scope of req.url.searchParams.getAll('scope')) {
      const [type, name, actions] = scope.split(':');
      if (type !== 'repository' || name === undefined) continue;
      if (actions?.split(',').includes('pull') && mayPull(name, basic.user)) pull.add(name);
    }
    const value = randomBytes(18).toString('base64url');
    tokens.set(value, { username: basic.user, pull });
    return { status: 200, body: { token: value } };
  };

  /** Who the request is, or the 401 to answer; `name` is the repository asked for. */
  const authorize = (req: FakeRequest, name: string | undefined): FakeResponse | undefined => {
    if (mode === 'basic') {
      const basic = basicUser(req);
      if (basic.bad) return unauthorized(name, false);
      if (name === undefined)
        return basic.user === undefined ? unauthorized(name, false) : undefined;
      return mayPull(name, basic.user) ? undefined : unauthorized(name, false);
    }
    const granted = bearer(req);
    if (granted === undefined) return unauthorized(name, false);
    if (name !== undefined && !granted.pull.has(name)) return unauthorized(name, true);
    return undefined;
  };

  const manifest = (req: FakeRequest, name: string, reference: string): FakeResponse => {
    const denied = authorize(req, name);
    if (denied) return denied;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return { status: 405, body: registryError('UNSUPPORTED', 'The operation is unsupported.') };
    }
    const repo = repositories.get(name);
    if (!repo) {
      return notFound(
        req,
        registryError('NAME_UNKNOWN', 'repository name not known to registry', { name }),
      );
    }
    const byDigest = reference.includes(':');
    const digest = byDigest ? reference : repo.tags.get(reference);
    let stored = digest === undefined ? undefined : repo.manifests.get(digest);
    let servedDigest = digest;
    if (stored === undefined || servedDigest === undefined) {
      return notFound(
        req,
        registryError('MANIFEST_UNKNOWN', 'manifest unknown', { Tag: reference }),
      );
    }
    const accepted = acceptedTypes(req.headers.accept);
    // As the distribution registry does: a manifest list asked for by a client
    // that cannot take lists gets the default platform's image; OCI types are
    // never rewritten, only refused.
    if (!byDigest && !accepted.has(stored.mediaType)) {
      if (stored.mediaType === DOCKER_LIST) {
        const child = stored.children?.get('linux/amd64');
        servedDigest = child;
        stored = child === undefined ? undefined : repo.manifests.get(child);
      } else if (stored.mediaType === OCI_INDEX || stored.mediaType === OCI_MANIFEST) {
        const what = stored.mediaType === OCI_INDEX ? 'OCI index' : 'OCI manifest';
        return notFound(
          req,
          registryError(
            'MANIFEST_UNKNOWN',
            `${what} found, but accept header does not support ${what}es`,
            { Tag: reference },
          ),
        );
      }
      if (stored === undefined || servedDigest === undefined) {
        return notFound(
          req,
          registryError('MANIFEST_UNKNOWN', 'manifest unknown', { Tag: reference }),
        );
      }
    }
    return {
      status: 200,
      headers: {
        'Content-Type': stored.mediaType,
        'Content-Length': String(stored.bytes.length),
        'Docker-Content-Digest': servedDigest,
        'Docker-Distribution-API-Version': 'registry/2.0',
        ETag: `"${servedDigest}"`,
      },
      ...(req.method === 'HEAD' ? {} : { body: stored.bytes.toString('utf8') }),
    };
  };

  const handle = (req: FakeRequest): FakeResponse => {
    const path = req.url.pathname;
    if (mode === 'bearer' && path === '/v2/auth' && req.method === 'GET') return token(req);
    if (path === '/v2/' || path === '/v2') {
      return (
        authorize(req, undefined) ?? {
          status: 200,
          headers: { 'Docker-Distribution-API-Version': 'registry/2.0' },
          body: {},
        }
      );
    }
    const m = MANIFEST_PATH.exec(path);
    if (m?.[1] !== undefined && m[2] !== undefined) {
      return manifest(req, decodeURIComponent(m[1]), decodeURIComponent(m[2]));
    }
    return { status: 404, body: '404 page not found\n', headers: { 'Content-Type': 'text/plain' } };
  };

  const repository = (name: string): Repository => {
    let repo = repositories.get(name);
    if (!repo) {
      repo = { private: false, tags: new Map(), manifests: new Map() };
      repositories.set(name, repo);
    }
    return repo;
  };
  const store = (repo: Repository, value: unknown, children?: Map<string, string>): string => {
    // Three-space indentation, as Docker writes manifests: the digest is of these exact bytes.
    const bytes = Buffer.from(JSON.stringify(value, null, 3), 'utf8');
    const digest = sha256(bytes);
    const mediaType =
      typeof (value as { mediaType?: unknown }).mediaType === 'string'
        ? (value as { mediaType: string }).mediaType
        : OCI_MANIFEST;
    repo.manifests.set(digest, { mediaType, bytes, ...(children ? { children } : {}) });
    return digest;
  };
  const singleArch = (oci: boolean, seed: string) => {
    const blob = (kind: string) => ({ size: 1024, digest: sha256(`${seed}:${kind}`) });
    return {
      schemaVersion: 2,
      mediaType: oci ? OCI_MANIFEST : DOCKER_MANIFEST,
      config: {
        mediaType: oci
          ? 'application/vnd.oci.image.config.v1+json'
          : 'application/vnd.docker.container.image.v1+json',
        ...blob('config'),
      },
      layers: [
        {
          mediaType: oci
            ? 'application/vnd.oci.image.layer.v1.tar+gzip'
            : 'application/vnd.docker.image.rootfs.diff.tar.gzip',
          ...blob('layer'),
        },
      ],
    };
  };

  const http = await startHttpFake({
    handle,
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  where.url = http.url;
  where.host = new URL(http.url).host;

  return Object.assign(http, {
    host: where.host,
    pushImage(
      name: string,
      tag: string,
      opts: { readonly private?: boolean; readonly manifest?: FakeManifest } = {},
    ): string {
      const repo = repository(name);
      if (opts.private !== undefined) repo.private = opts.private;
      pushes += 1;
      const seed = `${name}:${tag}:${pushes}`;
      const kind = opts.manifest ?? 'docker';
      let digest: string;
      if (typeof kind === 'object') {
        digest = store(repo, kind);
      } else if (kind === 'docker' || kind === 'oci') {
        digest = store(repo, singleArch(kind === 'oci', seed));
      } else {
        const oci = kind === 'oci-index';
        const children = new Map<string, string>();
        const manifests = ['amd64', 'arm64'].map((architecture) => {
          const child = singleArch(oci, `${seed}:${architecture}`);
          const childDigest = store(repo, child);
          children.set(`linux/${architecture}`, childDigest);
          const size = repo.manifests.get(childDigest)?.bytes.length ?? 0;
          return {
            mediaType: child.mediaType,
            size,
            digest: childDigest,
            platform: { architecture, os: 'linux' },
          };
        });
        digest = store(
          repo,
          { schemaVersion: 2, mediaType: oci ? OCI_INDEX : DOCKER_LIST, manifests },
          children,
        );
      }
      repo.tags.set(tag, digest);
      return digest;
    },
    retag(name: string, fromTag: string, toTag: string): string {
      const repo = repositories.get(name);
      const digest = repo?.tags.get(fromTag);
      if (!repo || digest === undefined) throw new Error(`fake registry: no ${name}:${fromTag}`);
      repo.tags.set(toTag, digest);
      return digest;
    },
    deleteTag(name: string, tag: string): void {
      repositories.get(name)?.tags.delete(tag);
    },
    addUser(username: string, password: string): void {
      users.set(username, password);
    },
  });
}

function registryError(code: string, message: string, detail: unknown = null) {
  return { errors: [{ code, message, detail }] };
}

/** A 404 with the spec's error body (none on HEAD, which has no body). */
function notFound(req: FakeRequest, body: unknown): FakeResponse {
  return req.method === 'HEAD' ? { status: 404 } : { status: 404, body };
}

/** The media types of an `Accept` header (parameters dropped); none: schema 2 only, as Docker assumes. */
function acceptedTypes(header: string | undefined): Set<string> {
  const types = (header ?? '')
    .split(',')
    .map((t) => t.split(';')[0]?.trim() ?? '')
    .filter((t) => t !== '');
  return new Set(types.length ? types : [DOCKER_MANIFEST]);
}
