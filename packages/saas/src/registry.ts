import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { QontractError } from '@qontract/core';
import { pyStrRepr } from '@qontract/pycompat';
import { z } from 'zod';
import { blockedImages, type ImagePatternsBlockRule, matchingImagePattern } from './images.ts';
import type { RequestLimit } from './sources.ts';

/*
 * Image validation and digests of openshift-saas-deploy: the original asks the
 * image's registry for its manifest (sretoolbox's `Image`). Why Node's fetch
 * and a small hand-written client rather than a library: the npm registry
 * clients (`@snyk/docker-registry-v2-client`, joyent's `docker-registry-client`)
 * take no AbortSignal, do not honour Retry-After, always speak HTTPS or always
 * HTTP, and bring their own HTTP stacks; the reference parsers
 * (`@codefresh-io/docker-reference`, `docker-parse-image`,
 * `parse-docker-image-name`) are unmaintained and miss rules we need
 * (`library/`, digests). We need two GETs and one HEAD; zod checks every body.
 */

// ---------------------------------------------------------------------------
// Image references

/** A parsed image reference; `registry` is as written (`docker.io` for Docker Hub). */
export interface ImageReference {
  readonly registry: string;
  /** The repository path: `library/nginx`, `app-sre/qontract-reconcile`. */
  readonly repository: string;
  /** `latest` when neither a tag nor a digest is given. */
  readonly tag: string | undefined;
  readonly digest: string | undefined;
}

const DOCKER_HUB = 'docker.io';
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;
const DIGEST = /^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$/;
const DOMAIN =
  /^(?:\[[0-9a-fA-F:.]+\]|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*)(?::[0-9]+)?$/;

/**
 * Parses an image reference as Docker does: an optional registry (the first
 * path segment when it has a `.` or a `:` or is `localhost`; Docker Hub
 * otherwise, where one-segment names live under `library/`), the repository,
 * then `:tag` and/or `@sha256:…`, tag `latest` when neither is given.
 * Variations of the original (sretoolbox) kept: a `docker://` prefix is
 * accepted. Not kept: sretoolbox takes only names with a dot as registries
 * (so `localhost:5000/x` is unparseable there) and allows upper case in
 * repository names, which every registry refuses anyway.
 */
export function parseImageReference(image: string): ImageReference {
  const fail = (why: string) =>
    new QontractError(`invalid image reference ${JSON.stringify(image)}: ${why}`);
  let rest = image.startsWith('docker://') ? image.slice('docker://'.length) : image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw fail(`bad digest ${JSON.stringify(digest)}`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw fail(`bad tag ${JSON.stringify(tag)}`);
  }
  let registry = DOCKER_HUB;
  let repository = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      if (!DOMAIN.test(first)) throw fail(`bad registry ${JSON.stringify(first)}`);
      registry = first === 'index.docker.io' ? DOCKER_HUB : first;
      repository = rest.slice(slash + 1);
    }
  }
  if (registry === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`;
  if (repository.length > 255 || !repository.split('/').every((c) => PATH_COMPONENT.test(c))) {
    throw fail(`bad repository name ${JSON.stringify(repository)}`);
  }
  return { registry, repository, tag: tag ?? (digest ? undefined : 'latest'), digest };
}

/** `registry/repository[:tag][@digest]`: the reference with every default filled in. */
function canonicalImage(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/**
 * Loopback hosts only are spoken to over plain HTTP; everything else over
 * HTTPS. Docker's rule is close: it tries plain HTTP only for registries
 * listed as insecure, and 127.0.0.0/8 is insecure by default. Our fakes
 * listen on 127.0.0.1; no real registry does.
 */
function isLoopback(host: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

function registryBaseUrl(registry: string): string {
  if (registry === DOCKER_HUB) return 'https://registry-1.docker.io';
  return `${isLoopback(registry) ? 'http' : 'https'}://${registry}`;
}

// ---------------------------------------------------------------------------
// Credentials

/** A user and password (or robot token) for one registry. */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/**
 * The image credentials of a saas file (`authentication.image`), as the
 * original's `ImageAuth`: a docker config's `auths` (in the secret's order),
 * or a user and token, optionally bound to one registry (`authServer`).
 */
export interface ImageAuth {
  readonly username?: string;
  readonly password?: string;
  readonly authServer?: string;
  readonly dockerConfigAuths?: ReadonlyArray<BasicCredentials & { readonly registry: string }>;
}

const DockerConfig = z.object({
  auths: z.record(z.string(), z.looseObject({ auth: z.string() })),
});

/**
 * The `ImageAuth` of a Vault secret (all its fields): `.dockerconfigjson`, or
 * `user` + `token` (+ `url`). A secret with neither is reported through
 * `warn` and treated as no credentials, as the original does. Errors name the
 * secret path and the docker config entry, never a value.
 */
export function imageAuthFromSecret(
  fields: Readonly<Record<string, string>>,
  secretPath: string,
  warn?: (message: string) => void,
): ImageAuth {
  const has = (k: string) => Object.hasOwn(fields, k);
  const basic = has('user') && has('token');
  const dockerConfigText = has('.dockerconfigjson') ? fields['.dockerconfigjson'] : undefined;
  if (!basic && dockerConfigText === undefined) {
    warn?.(
      `the specified image authentication secret found in path ${secretPath} does not contain all required keys: ['.dockerconfigjson'] or ['user', 'token']`,
    );
    return {};
  }
  const where = `image authentication secret ${secretPath}`;
  let dockerConfigAuths: ImageAuth['dockerConfigAuths'];
  if (dockerConfigText !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(dockerConfigText);
    } catch {
      // JSON.parse's message quotes the text: the secret itself.
      throw new QontractError(`${where}: .dockerconfigjson is not valid JSON`);
    }
    const parsed = DockerConfig.safeParse(json);
    if (!parsed.success) {
      throw new QontractError(
        `${where}: .dockerconfigjson must be {"auths": {"<registry>": {"auth": "<base64 user:password>"}}}`,
      );
    }
    dockerConfigAuths = Object.entries(parsed.data.auths).map(([registry, entry]) => {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const split = decoded.indexOf(':');
      if (split < 0) {
        throw new QontractError(`${where}: auths.${registry}.auth is not base64 of user:password`);
      }
      return { registry, username: decoded.slice(0, split), password: decoded.slice(split + 1) };
    });
  }
  return {
    ...(has('user') ? { username: fields.user } : {}),
    ...(has('token') ? { password: fields.token } : {}),
    ...(has('url') ? { authServer: fields.url } : {}),
    ...(dockerConfigAuths ? { dockerConfigAuths } : {}),
  };
}

/**
 * The credentials the original sends for `image`: those of the first docker
 * config entry whose key prefixes the image, else user + token; none when
 * `authServer` is set and is not the image's registry (so that credentials
 * never go to another registry).
 */
function credentialsFor(
  image: string,
  registry: string,
  auth: ImageAuth,
): BasicCredentials | undefined {
  const entry = auth.dockerConfigAuths?.find((e) => image.startsWith(e.registry));
  const chosen =
    entry ??
    (auth.username !== undefined && auth.password !== undefined
      ? { username: auth.username, password: auth.password }
      : undefined);
  if (chosen === undefined) return undefined;
  if (auth.authServer !== undefined && auth.authServer !== registry) return undefined;
  return { username: chosen.username, password: chosen.password };
}

/** Tells credentials apart in cache keys without keeping them readable there. */
function credentialIdentity(credentials: BasicCredentials | undefined): string {
  if (credentials === undefined) return 'anonymous';
  const hash = createHash('sha256');
  hash.update(credentials.username).update('\0').update(credentials.password);
  return `basic:${hash.digest('hex').slice(0, 16)}`;
}

// ---------------------------------------------------------------------------
// The registry client

const MANIFEST_TYPES = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v1+prettyjws',
  'application/vnd.docker.distribution.manifest.v1+json',
].join(', ');

/** A manifest as far as we read it: it must be a JSON object with a schema version. */
const Manifest = z.looseObject({ schemaVersion: z.number(), mediaType: z.string().optional() });
const ErrorBody = z.object({
  errors: z.array(z.looseObject({ code: z.string().optional(), message: z.string().optional() })),
});
const TokenBody = z
  .looseObject({ token: z.string().min(1).optional(), access_token: z.string().min(1).optional() })
  .refine((b) => b.token !== undefined || b.access_token !== undefined, 'no token in the answer');

/** What the registry says of a manifest: its digest (`sha256:…`) and media type. */
export interface ManifestDigest {
  readonly digest: string;
  readonly mediaType: string | undefined;
}

/** A registry refused a request or answered what we do not understand. Never carries a credential. */
export class RegistryError extends QontractError {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

export interface RegistryClientOptions {
  /** The run's stop signal: aborts requests in flight and retry waits. */
  readonly signal?: AbortSignal | undefined;
  /** Total attempts per request on 429, 5xx and lost connections (default 5, as sretoolbox). */
  readonly attempts?: number | undefined;
  /** Wait before retry n without a Retry-After: n × this (default 1 s). */
  readonly backoffMs?: number | undefined;
  /** No wait, whatever Retry-After says, is longer (default 60 s). */
  readonly maxWaitMs?: number | undefined;
  /** One attempt is abandoned (and retried) after this long (default 60 s, the original's). */
  readonly timeoutMs?: number | undefined;
  readonly fetch?: typeof fetch | undefined;
  /** Waits `ms`; rejects when `signal` aborts. */
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** Told about each retry (the caller logs it). */
  readonly onRetry?: ((message: string) => void) | undefined;
  /** Told about each manifest request (HEAD or GET) with the registry's host (the request counter). */
  readonly onManifestRequest?: ((registry: string) => void) | undefined;
}

/** An Authorization header value, and whether the token server refused our credentials. */
interface Authorization {
  readonly header: string | undefined;
  readonly credentialsRefused: boolean;
}

type Challenge =
  | { readonly scheme: 'bearer'; readonly realm: string; readonly params: Map<string, string> }
  | { readonly scheme: 'basic' };

/**
 * Reads manifests from registries speaking the Docker Registry HTTP API V2 /
 * OCI distribution spec, with their token (Bearer) or Basic auth. One per
 * run: it keeps the tokens it got per (registry, repository, credentials).
 */
export class RegistryClient {
  readonly #signal: AbortSignal | undefined;
  readonly #attempts: number;
  readonly #backoffMs: number;
  readonly #maxWaitMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #onRetry: ((message: string) => void) | undefined;
  readonly #onManifestRequest: ((registry: string) => void) | undefined;
  readonly #authorizations = new Map<string, Promise<Authorization>>();
  /** Authorizations the registry refused right after we got them: asking again would not help. */
  readonly #denied = new WeakSet<Authorization>();
  /**
   * The last challenge of each registry: a token for a repository not seen
   * yet is asked for before its first manifest request, instead of after a
   * 401 (Docker's client does the same with its ping of `/v2/`).
   */
  readonly #challenges = new Map<string, Challenge>();

  constructor(options: RegistryClientOptions = {}) {
    this.#signal = options.signal;
    this.#attempts = options.attempts ?? 5;
    this.#backoffMs = options.backoffMs ?? 1000;
    this.#maxWaitMs = options.maxWaitMs ?? 60_000;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.#onRetry = options.onRetry;
    this.#onManifestRequest = options.onManifestRequest;
  }

  /**
   * The digest of the manifest `ref` names, or undefined when the registry
   * has no such repository or tag (404). HEAD first (Docker Hub does not
   * count it against the pull limit), GET when HEAD gives no digest or
   * fails. Like the original, a reference with both a tag and a digest is
   * looked up by its tag.
   */
  async manifestDigest(
    ref: ImageReference,
    credentials?: BasicCredentials,
  ): Promise<ManifestDigest | undefined> {
    const reference = ref.tag ?? ref.digest ?? 'latest';
    const url = `${registryBaseUrl(ref.registry)}/v2/${ref.repository}/manifests/${reference}`;
    this.#onManifestRequest?.(ref.registry);
    const head = await this.#authorized('HEAD', url, ref, credentials);
    if (head.response.status === 404) return undefined;
    const headDigest = head.response.headers.get('docker-content-digest');
    if (head.response.ok && headDigest !== null && DIGEST.test(headDigest)) {
      return { digest: headDigest, mediaType: mediaTypeOf(head.response) };
    }
    if (head.response.status === 429 || head.response.status >= 500) {
      // Retried enough already; a GET would only wait as long again.
      throw new RegistryError(
        `HEAD ${url}: HTTP ${head.response.status} (after ${this.#attempts} attempts)`,
        head.response.status,
      );
    }
    // A failed HEAD has no body to say why: the GET's error body will.
    this.#onManifestRequest?.(ref.registry);
    const get = await this.#authorized('GET', url, ref, credentials);
    const bytes = Buffer.from(await get.response.arrayBuffer());
    this.#signal?.throwIfAborted();
    if (get.response.status === 404) return undefined;
    const what = `GET ${url}`;
    if (!get.response.ok) {
      const refused = get.credentialsRefused ? ' (the token server refused the credentials)' : '';
      throw new RegistryError(
        `${what}: HTTP ${get.response.status}${registryErrors(bytes)}${refused}`,
        get.response.status,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new RegistryError(`${what}: the manifest is not JSON`, get.response.status);
    }
    const manifest = Manifest.safeParse(json);
    if (!manifest.success) {
      throw new RegistryError(`${what}: the answer is not a manifest`, get.response.status);
    }
    const header = get.response.headers.get('docker-content-digest');
    // The spec makes the header optional; the digest is that of the bytes served.
    const digest =
      header !== null && DIGEST.test(header)
        ? header
        : `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    return { digest, mediaType: mediaTypeOf(get.response) ?? manifest.data.mediaType };
  }

  /**
   * Sends the request with the authorization held for this repository; on a
   * 401 answers the challenge (a token from the realm, or Basic credentials)
   * and sends it once more. Concurrent requests share one token request.
   */
  async #authorized(
    method: 'GET' | 'HEAD',
    url: string,
    ref: ImageReference,
    credentials: BasicCredentials | undefined,
  ): Promise<{ response: Response; credentialsRefused: boolean }> {
    const key = `${ref.registry}\0${ref.repository}\0${credentialIdentity(credentials)}`;
    const held = this.#authorizations.get(key) ?? this.#anticipate(key, ref, credentials);
    const before = held ? await held.catch(() => undefined) : undefined;
    const first = await this.#send(method, url, before?.header);
    if (before !== undefined && this.#denied.has(before)) {
      return { response: first, credentialsRefused: before.credentialsRefused };
    }
    if (first.status !== 401) return { response: first, credentialsRefused: false };
    const challenge = parseChallenge(first.headers.get('www-authenticate'));
    if (challenge === undefined || (challenge.scheme === 'basic' && credentials === undefined)) {
      return { response: first, credentialsRefused: false };
    }
    this.#challenges.set(ref.registry, challenge);
    await first.arrayBuffer();
    // Whoever sees the held authorization fail first fetches a new one; the others wait for it.
    if (this.#authorizations.get(key) === held) {
      const fresh =
        challenge.scheme === 'basic'
          ? Promise.resolve({ header: basicHeader(credentials), credentialsRefused: false })
          : this.#token(challenge, ref, credentials);
      this.#authorizations.set(key, fresh);
      fresh.catch(() => {
        if (this.#authorizations.get(key) === fresh) this.#authorizations.delete(key);
      });
    }
    const now = await (this.#authorizations.get(key) as Promise<Authorization>);
    const second = await this.#send(method, url, now.header);
    if (second.status === 401) this.#denied.add(now);
    return { response: second, credentialsRefused: now.credentialsRefused };
  }

  /** The authorization a known challenge of the registry asks for, fetched ahead of the first request. */
  #anticipate(
    key: string,
    ref: ImageReference,
    credentials: BasicCredentials | undefined,
  ): Promise<Authorization> | undefined {
    const known = this.#challenges.get(ref.registry);
    if (known === undefined || (known.scheme === 'basic' && credentials === undefined)) {
      return undefined;
    }
    const fresh =
      known.scheme === 'basic'
        ? Promise.resolve({ header: basicHeader(credentials), credentialsRefused: false })
        : // The remembered scope named another repository: this one asks for its own.
          this.#token(
            { ...known, params: new Map([...known.params].filter(([k]) => k !== 'scope')) },
            ref,
            credentials,
          );
    this.#authorizations.set(key, fresh);
    fresh.catch(() => {
      if (this.#authorizations.get(key) === fresh) this.#authorizations.delete(key);
    });
    return fresh;
  }

  /** A Bearer token from the challenge's realm: with the credentials, or anonymous. */
  async #token(
    challenge: Extract<Challenge, { scheme: 'bearer' }>,
    ref: ImageReference,
    credentials: BasicCredentials | undefined,
  ): Promise<Authorization> {
    let realm: URL;
    try {
      realm = new URL(challenge.realm);
    } catch {
      throw new RegistryError(
        `${ref.registry}: bad token realm ${JSON.stringify(challenge.realm)}`,
        401,
      );
    }
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && isLoopback(realm.host))) {
      throw new RegistryError(`${ref.registry}: token realm ${realm.origin} is not HTTPS`, 401);
    }
    const service = challenge.params.get('service');
    if (service !== undefined) realm.searchParams.set('service', service);
    realm.searchParams.set(
      'scope',
      challenge.params.get('scope') ?? `repository:${ref.repository}:pull`,
    );
    const what = `token request to ${realm.origin}${realm.pathname}`;
    let credentialsRefused = false;
    let answer = await this.#send('GET', realm.href, basicHeader(credentials));
    if (answer.status === 401 && credentials !== undefined) {
      // As the original: refused credentials fall back to an anonymous token
      // (enough for public repositories); the manifest request then says more.
      await answer.arrayBuffer();
      credentialsRefused = true;
      answer = await this.#send('GET', realm.href, undefined);
    }
    const bytes = Buffer.from(await answer.arrayBuffer());
    if (!answer.ok) {
      throw new RegistryError(
        `${what}: HTTP ${answer.status}${registryErrors(bytes)}`,
        answer.status,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new RegistryError(`${what}: the answer is not JSON`, answer.status);
    }
    const body = TokenBody.safeParse(json);
    if (!body.success) throw new RegistryError(`${what}: no token in the answer`, answer.status);
    return {
      header: `Bearer ${body.data.token ?? body.data.access_token}`,
      credentialsRefused,
    };
  }

  /** One request, retried on 429, 5xx and lost connections, waiting as Retry-After asks (bounded). */
  async #send(
    method: 'GET' | 'HEAD',
    url: string,
    authorization: string | undefined,
  ): Promise<Response> {
    const what = `${method} ${url.replace(/\?.*$/, '')}`;
    const runSignal = this.#signal;
    for (let attempt = 1; ; attempt++) {
      runSignal?.throwIfAborted();
      let answer: Response | undefined;
      let problem = '';
      try {
        const timeout = AbortSignal.timeout(this.#timeoutMs);
        answer = await this.#fetch(url, {
          method,
          headers: {
            Accept: MANIFEST_TYPES,
            ...(authorization === undefined ? {} : { Authorization: authorization }),
          },
          signal: runSignal ? AbortSignal.any([runSignal, timeout]) : timeout,
        });
      } catch (e) {
        if (runSignal?.aborted) throw runSignal.reason;
        problem = `no answer: ${connectionProblem(e, this.#timeoutMs)}`;
      }
      if (answer !== undefined) {
        if (answer.status !== 429 && answer.status < 500) return answer;
        if (attempt >= this.#attempts) return answer;
        await answer.arrayBuffer().catch(() => undefined);
        problem = `HTTP ${answer.status}`;
      } else if (attempt >= this.#attempts) {
        throw new RegistryError(`${what}: ${problem} (after ${attempt} attempts)`, 0);
      }
      const waitMs = Math.min(retryAfterMs(answer) ?? this.#backoffMs * attempt, this.#maxWaitMs);
      this.#onRetry?.(
        `${what}: ${problem}, retrying in ${waitMs / 1000}s (attempt ${attempt}/${this.#attempts})`,
      );
      try {
        await this.#sleep(waitMs, runSignal);
      } catch (e) {
        throw runSignal?.aborted ? runSignal.reason : e;
      }
    }
  }
}

function basicHeader(credentials: BasicCredentials | undefined): string | undefined {
  if (credentials === undefined) return undefined;
  const pair = `${credentials.username}:${credentials.password}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

function mediaTypeOf(response: Response): string | undefined {
  return response.headers.get('content-type')?.split(';')[0]?.trim() || undefined;
}

/** `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"` (RFC 7235 auth-params). */
function parseChallenge(header: string | null): Challenge | undefined {
  if (header === null) return undefined;
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  if (scheme === 'basic') return { scheme: 'basic' };
  if (scheme !== 'bearer') return undefined;
  const params = new Map<string, string>();
  for (const m of header.slice(space + 1).matchAll(/([\w-]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g)) {
    const key = m[1]?.toLowerCase();
    const value = m[2]?.replace(/\\(.)/g, '$1') ?? m[3];
    if (key !== undefined && value !== undefined) params.set(key, value);
  }
  const realm = params.get('realm');
  params.delete('realm');
  return realm === undefined ? undefined : { scheme: 'bearer', realm, params };
}

/** `: <message> (<CODE>), …` from the spec's `{errors: [{code, message}]}` body, if any. */
function registryErrors(bytes: Buffer): string {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return '';
  }
  const body = ErrorBody.safeParse(json);
  if (!body.success || body.data.errors.length === 0) return '';
  return `: ${body.data.errors
    .map((e) => `${e.message ?? 'error'}${e.code ? ` (${e.code})` : ''}`)
    .join(', ')}`;
}

/** The wait Retry-After asks for (seconds or an HTTP date). */
function retryAfterMs(answer: Response | undefined): number | undefined {
  const value = answer?.headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function connectionProblem(e: unknown, timeoutMs: number): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return `no answer within ${timeoutMs / 1000}s`;
  }
  const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${e instanceof Error ? e.message : String(e)}${cause}`;
}

// ---------------------------------------------------------------------------
// Image lookups of one run

/** Looks up an image's manifest with a saas file's credentials; undefined when it does not exist. */
export type ImageLookup = (image: string, auth: ImageAuth) => Promise<ManifestDigest | undefined>;

/**
 * The lookup of one run: one registry request chain per distinct (image,
 * credentials), whoever asks and however often; concurrent callers share
 * the answer (and the failure). With `limit` (the run's pool), at most its
 * size of chains run at once; a caller served by the cache takes no place.
 */
export function createImageLookup(
  client: RegistryClient,
  limit: RequestLimit = (request) => request(),
): ImageLookup {
  const cache = new Map<string, Promise<ManifestDigest | undefined>>();
  return async (image, auth) => {
    const ref = parseImageReference(image);
    const credentials = credentialsFor(image, ref.registry, auth);
    const key = `${canonicalImage(ref)}\0${credentialIdentity(credentials)}`;
    let answer = cache.get(key);
    if (answer === undefined) {
      answer = limit(() => client.manifestDigest(ref, credentials));
      cache.set(key, answer);
    }
    return answer;
  };
}

// ---------------------------------------------------------------------------
// Validation of a target's images

/** The target whose images are checked, as error messages name it. */
export interface ImageCheckTarget {
  readonly saasFileName: string;
  readonly resourceTemplateName: string;
  readonly cluster: string;
  readonly namespace: string;
  readonly targetName?: string | null | undefined;
}

function prefixOf(target: ImageCheckTarget): string {
  const name = target.targetName ? ` (target ${target.targetName})` : '';
  return `[${target.saasFileName}/${target.resourceTemplateName}] ${target.cluster}/${target.namespace}${name}:`;
}

/** Python's repr of a label selector (the original's message shows the dict). */
function selectorRepr(selector: Readonly<Record<string, unknown>>): string {
  const value = (v: unknown) =>
    typeof v === 'string'
      ? pyStrRepr(v)
      : typeof v === 'boolean'
        ? v
          ? 'True'
          : 'False'
        : v === null
          ? 'None'
          : JSON.stringify(v);
  return `{${Object.entries(selector)
    .map(([k, v]) => `${pyStrRepr(k)}: ${value(v)}`)
    .join(', ')}}`;
}

/**
 * The original's `_get_image`: the image must match the saas file's
 * `imagePatterns` and exist in its registry. The error message, or the manifest.
 */
async function checkImage(
  image: string,
  imagePatterns: readonly string[],
  auth: ImageAuth,
  lookup: ImageLookup,
  prefix: string,
): Promise<{ error: string } | { manifest: ManifestDigest }> {
  if (imagePatterns.length === 0) {
    return { error: `${prefix} imagePatterns is empty (does not contain ${image})` };
  }
  if (matchingImagePattern(image, imagePatterns) === undefined) {
    return { error: `${prefix} Image is not in imagePatterns: ${image}` };
  }
  try {
    const manifest = await lookup(image, auth);
    // Worded as its siblings; the original's `Image : <image> does not exist` has a stray ` :`.
    if (manifest === undefined) return { error: `${prefix} Image does not exist: ${image}` };
    return { manifest };
  } catch (e) {
    if (!(e instanceof QontractError)) throw e;
    return { error: `${prefix} Image is invalid: ${image}. details: ${e.message}` };
  }
}

/**
 * Why `image` cannot be used (the original's `_get_image` messages, after
 * `prefix`), or undefined when it matches `imagePatterns` and exists.
 */
export async function imageProblem(
  lookup: ImageLookup,
  options: {
    readonly image: string;
    readonly imagePatterns: readonly string[] | null | undefined;
    readonly auth: ImageAuth;
    readonly prefix: string;
  },
): Promise<string | undefined> {
  const { image, imagePatterns, auth, prefix } = options;
  const result = await checkImage(image, imagePatterns ?? [], auth, lookup, prefix);
  return 'error' in result ? result.error : undefined;
}

export interface TargetImageValidation {
  readonly target: ImageCheckTarget;
  /** The images of the target's objects (`collectImages`). */
  readonly images: Iterable<string>;
  /** The saas file's `imagePatterns`. */
  readonly imagePatterns: readonly string[] | null | undefined;
  /** The settings' `imagePatternsBlockRules`. */
  readonly blockRules: readonly ImagePatternsBlockRule[] | null | undefined;
  /** The labels of the target namespace's environment. */
  readonly environmentLabels: Readonly<Record<string, unknown>> | null | undefined;
  readonly auth: ImageAuth;
  readonly lookup: ImageLookup;
}

/**
 * The original's `_check_images`: the error messages of a target's images,
 * none when it may be deployed. The first block rule the images violate
 * fails the target alone; otherwise every image not matching the patterns,
 * and every one its registry does not have, gets its message. Registry
 * failures other than QontractErrors (bugs, the run's abort) are thrown.
 */
export async function validateTargetImages(check: TargetImageValidation): Promise<string[]> {
  const images = [...new Set(check.images)];
  if (images.length === 0) return [];
  const prefix = prefixOf(check.target);
  for (const rule of check.blockRules ?? []) {
    const blocked = blockedImages(rule, check.environmentLabels, images);
    if (blocked.length > 0) {
      return [
        `${prefix} Target contains blocked image patterns (${rule.imagePatterns.join(', ')}) for environment matching selector ${selectorRepr(rule.environmentLabelSelector)}: ${blocked.join(', ')}. These images are not allowed in this environment.`,
      ];
    }
  }
  const results = await Promise.all(
    images.map((image) =>
      checkImage(image, check.imagePatterns ?? [], check.auth, check.lookup, prefix),
    ),
  );
  return results.flatMap((r) => ('error' in r ? [r.error] : []));
}

/** `REPO_DIGEST` and `IMAGE_DIGEST` of a template. */
export interface ImageDigests {
  /** `<registry>/<repository>@sha256:…` */
  readonly repoDigest: string;
  /** `sha256:…` */
  readonly imageDigest: string;
}

/**
 * The digests of `REGISTRY_IMG:IMAGE_TAG` for a template that declares
 * `REPO_DIGEST` or `IMAGE_DIGEST`: the same pattern and credential rules as
 * image validation; a QontractError naming the target and image when the
 * image may not be used or does not exist.
 */
export async function imageDigest(
  lookup: ImageLookup,
  options: {
    readonly registryImg: string;
    readonly tag: string;
    readonly imagePatterns: readonly string[] | null | undefined;
    readonly auth: ImageAuth;
    readonly target: ImageCheckTarget;
  },
): Promise<ImageDigests> {
  const image = `${options.registryImg}:${options.tag}`;
  const prefix = prefixOf(options.target);
  const result = await checkImage(image, options.imagePatterns ?? [], options.auth, lookup, prefix);
  if ('error' in result) throw new QontractError(result.error);
  const ref = parseImageReference(image);
  return {
    repoDigest: `${ref.registry}/${ref.repository}@${result.manifest.digest}`,
    imageDigest: result.manifest.digest,
  };
}
