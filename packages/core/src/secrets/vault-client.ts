import { readFile } from 'node:fs/promises';
import type { SecretRedactor } from '../redaction.ts';
import { VaultAuthenticationError, VaultConnectionError } from './types.ts';

/** Where the service account JWT lives in a pod (upstream's default for `KUBE_SA_TOKEN_PATH`). */
export const DEFAULT_KUBE_SA_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** How the client gets its Vault token. */
export type VaultAuth =
  | { readonly method: 'token'; readonly token: string }
  | { readonly method: 'approle'; readonly roleId: string; readonly secretId: string }
  | {
      readonly method: 'kubernetes';
      readonly role: string;
      /** Auth mount, `kubernetes` by default. */
      readonly mount?: string;
      /** The JWT file; re-read on every login because the kubelet rotates it. */
      readonly jwtPath?: string;
    };

export interface VaultClientOptions {
  /** Vault address, e.g. `https://vault.example.com`. */
  readonly server: string;
  readonly auth: VaultAuth;
  /** Every token and credential the client handles is registered here. */
  readonly redactor?: SecretRedactor | undefined;
  readonly fetch?: typeof fetch | undefined;
  /** Attempts per request on transient failures (default 3, as upstream). */
  readonly attempts?: number | undefined;
  /** Backoff unit: attempt n waits n × this many ms (default 1000). */
  readonly retryDelayMs?: number | undefined;
  /** Per-request timeout (default 30 s). */
  readonly timeoutMs?: number | undefined;
}

export interface VaultResponse {
  readonly status: number;
  /** The parsed JSON body; `undefined` for an empty body (204). */
  readonly body: unknown;
}

/**
 * Vault's HTTP API with the token handling the original's client does: logs in
 * lazily, logs in again when the lease ran out or a 403 turns out to come from
 * an expired token, and retries transient failures (connection errors, 5xx,
 * 429) with linear backoff. Never retries 4xx answers; never puts a token into
 * an error message.
 */
export class VaultClient {
  readonly server: string;
  readonly #auth: VaultAuth;
  readonly #redactor: SecretRedactor | undefined;
  readonly #fetch: typeof fetch;
  readonly #attempts: number;
  readonly #retryDelayMs: number;
  readonly #timeoutMs: number;
  #token: string | undefined;
  /** Epoch ms after which the token's lease is considered over; Infinity when unknown. */
  #tokenExpiresAt = Number.POSITIVE_INFINITY;
  #login: Promise<string> | undefined;

  constructor(options: VaultClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.#auth = options.auth;
    this.#redactor = options.redactor;
    this.#fetch = options.fetch ?? fetch;
    this.#attempts = Math.max(1, options.attempts ?? 3);
    this.#retryDelayMs = options.retryDelayMs ?? 1000;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    if (this.#auth.method === 'token') {
      this.#redactor?.add(this.#auth.token);
      this.#token = this.#auth.token;
    } else if (this.#auth.method === 'approle') {
      this.#redactor?.add(this.#auth.secretId);
    }
  }

  /** `ECONNREFUSED`, `no answer within 30s`: why no answer came, in the system's words. */
  #connectionProblem(e: unknown): string {
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
      return `no answer within ${this.#timeoutMs / 1000}s`;
    }
    const cause = e instanceof Error ? (e.cause as { code?: string; message?: string }) : undefined;
    return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
  }

  /** Sends an authenticated request to `/v1/<apiPath>`. */
  async request(method: string, apiPath: string, body?: unknown): Promise<VaultResponse> {
    let token = await this.#currentToken();
    let response = await this.#send(method, apiPath, body, token);
    if (response.status === 403 && this.#auth.method !== 'token' && !(await this.#isValid(token))) {
      this.#forget(token);
      token = await this.#currentToken();
      response = await this.#send(method, apiPath, body, token);
    }
    return response;
  }

  /** Logs in (or checks the static token) now, so a bad setup fails before any work. */
  async authenticate(): Promise<void> {
    await this.#currentToken();
  }

  async #currentToken(): Promise<string> {
    if (this.#token !== undefined && Date.now() < this.#tokenExpiresAt) return this.#token;
    if (this.#auth.method === 'token') return this.#auth.token;
    this.#login ??= this.#doLogin().finally(() => {
      this.#login = undefined;
    });
    return this.#login;
  }

  #forget(token: string): void {
    if (this.#token === token) {
      this.#token = undefined;
      this.#tokenExpiresAt = Number.POSITIVE_INFINITY;
    }
  }

  async #isValid(token: string): Promise<boolean> {
    const lookup = await this.#send('GET', 'auth/token/lookup-self', undefined, token);
    return lookup.status === 200;
  }

  async #doLogin(): Promise<string> {
    const auth = this.#auth;
    let path: string;
    let payload: Record<string, string>;
    if (auth.method === 'approle') {
      path = 'auth/approle/login';
      payload = { role_id: auth.roleId, secret_id: auth.secretId };
    } else if (auth.method === 'kubernetes') {
      const jwtPath = auth.jwtPath ?? DEFAULT_KUBE_SA_TOKEN_PATH;
      let jwt: string;
      try {
        jwt = (await readFile(jwtPath, 'utf8')).trim();
      } catch (e) {
        throw new VaultAuthenticationError(
          `cannot read the Kubernetes service account token at ${jwtPath}: ${(e as NodeJS.ErrnoException).code ?? 'read failed'}`,
        );
      }
      this.#redactor?.add(jwt);
      path = `auth/${auth.mount ?? 'kubernetes'}/login`;
      payload = { role: auth.role, jwt };
    } else {
      return auth.token;
    }
    const started = Date.now();
    const response = await this.#send('POST', path, payload, undefined);
    const token = clientToken(response.body);
    if (response.status !== 200 || token === undefined) {
      throw new VaultAuthenticationError(
        `Vault ${auth.method} login at ${this.server} failed: HTTP ${response.status}${vaultErrors(response.body)}`,
      );
    }
    this.#redactor?.add(token);
    this.#token = token;
    const lease = leaseSeconds(response.body);
    // Renew a little early, so a request never goes out with a token about to lapse.
    this.#tokenExpiresAt = lease > 0 ? started + lease * 1000 * 0.9 : Number.POSITIVE_INFINITY;
    return token;
  }

  async #send(
    method: string,
    apiPath: string,
    body: unknown,
    token: string | undefined,
  ): Promise<VaultResponse> {
    const url = `${this.server}/v1/${apiPath}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token !== undefined) headers['x-vault-token'] = token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    // The request as shown in errors: the API path, without the query or the server.
    const what = `${method} /v1/${apiPath.split('?')[0]}`;
    let problem = '';
    // Linear backoff as upstream's retry decorator does; retry libraries only offer exponential.
    for (let attempt = 1; attempt <= this.#attempts; attempt++) {
      if (attempt > 1) await sleep(this.#retryDelayMs * (attempt - 1));
      let res: Response;
      try {
        res = await this.#fetch(url, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (e) {
        problem = `unreachable: ${this.#connectionProblem(e)}`;
        continue;
      }
      const text = await res.text().catch(() => '');
      if (res.status >= 500 || res.status === 429) {
        problem = `failed: HTTP ${res.status}${vaultErrors(parseJson(text))}`;
        continue;
      }
      return { status: res.status, body: parseJson(text) };
    }
    const attempts = `${this.#attempts} attempt${this.#attempts === 1 ? '' : 's'}`;
    const message = `Vault at ${this.server} ${problem} (${what}, ${attempts})`;
    throw new VaultConnectionError(this.#redactor ? this.#redactor.redact(message) : message);
  }
}

/** `: err1; err2` from a Vault `{errors: [...]}` body, or nothing. */
export function vaultErrors(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return '';
  return `: ${errors.map(String).join('; ')}`;
}

function clientToken(body: unknown): string | undefined {
  const auth = (body as { auth?: { client_token?: unknown } } | undefined)?.auth;
  return typeof auth?.client_token === 'string' && auth.client_token
    ? auth.client_token
    : undefined;
}

function leaseSeconds(body: unknown): number {
  const auth = (body as { auth?: { lease_duration?: unknown } } | undefined)?.auth;
  return typeof auth?.lease_duration === 'number' ? auth.lease_duration : 0;
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
