import type { KubeConfig, Watch } from '@kubernetes/client-node';
import { deepFreeze } from '@qontract/core';
import { type ApiResource, apiVersionOf, resourcePath } from './api-resources.ts';
import { compactObject } from './compact-object.ts';
import { KubeApiError, type KubeClient, type KubeObject } from './kube-client.ts';

/**
 * The list+watch cache of one kind on one cluster (an informer): one paginated
 * list, then a watch from the list's resourceVersion with bookmarks, resumed
 * from the newest version seen after the server ends it or the connection
 * drops, and a full re-list when the server says that version is gone (410).
 *
 * Why not client-node's informer (`makeInformer`/`ListWatch`): it lists
 * through the typed API clients (their models drop unknown fields and turn
 * timestamps into Dates, which breaks the original's three-way compare), keeps
 * every full object, and neither asks for bookmarks nor bounds its memory. Its
 * `Watch` (the streaming request) is used as it is: a watch holds its HTTP/1.1
 * connection for its whole life, so it cannot share the engine's keep-alive
 * pool anyway, and the lists go through the engine's `KubeClient` (its
 * retries, time-outs and request counting).
 *
 * Memory: each object is kept in the compact form of `compactObject` (no
 * managedFields field sets, no last-applied copy, repeated short values held
 * once), frozen: readers share it, so the first iteration of watch mode holds
 * one copy of the current state, not the cache's and a parsed one.
 */
export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEvent {
  readonly type: CacheEventType;
  readonly namespace: string;
  readonly name: string;
  /** The object after the change; the last known one for DELETED. Compact form. */
  readonly object: KubeObject;
  /** `performance.now()` when the event arrived (reaction latency). */
  readonly receivedAt: number;
  /** Synthesised by a re-list after a 410, not streamed. */
  readonly fromRelist: boolean;
}

/** Why a watch was opened again. */
export type WatchRestartReason = 'closed' | 'error' | 'expired';

export interface WatchCacheHooks {
  readonly onEvent?: (event: CacheEvent) => void;
  readonly onRestart?: (reason: WatchRestartReason) => void;
  /** The number of cached objects changed. */
  readonly onSize?: (size: number) => void;
  readonly onError?: (message: string) => void;
}

export interface WatchCacheOptions extends WatchCacheHooks {
  /** Lists go through this client (its retries, time-outs, stats). */
  readonly client: KubeClient;
  readonly resource: ApiResource;
  /** Only this namespace; the whole cluster when absent. */
  readonly namespace?: string;
  /**
   * A cluster-wide cache that keeps only the objects of these namespaces (the
   * ones its runs read): the others are neither kept nor reported. Every
   * namespace's when absent.
   */
  readonly namespaces?: ReadonlySet<string>;
  /**
   * `timeoutSeconds` of each watch request: the server ends it then and the
   * cache resumes. Default: random between 5 and 10 minutes (as client-go).
   */
  readonly watchTimeoutSeconds?: () => number;
  /** Waits after a failed list or watch: doubling from `min` up to `max`. */
  readonly backoffMs?: { readonly min: number; readonly max: number };
  readonly pageSize?: number;
}

type ClientNode = typeof import('@kubernetes/client-node');

function keyOf(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

interface Entry {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  /** Compact and frozen. */
  readonly object: KubeObject;
}

export class WatchCache {
  readonly #client: KubeClient;
  readonly #resource: ApiResource;
  readonly #namespace: string | undefined;
  readonly #namespaces: ReadonlySet<string> | undefined;
  readonly #hooks: WatchCacheHooks;
  readonly #timeoutSeconds: () => number;
  readonly #backoff: { readonly min: number; readonly max: number };
  readonly #pageSize: number;
  #objects = new Map<string, Entry>();
  #resourceVersion = '';
  #watch: Promise<{ watch: Watch }> | undefined;
  #request: AbortController | undefined;
  #closed = false;
  #failures = 0;
  #expired = false;
  /** When the current watch was opened, and whether anything came on it. */
  #watchOpenedAt = 0;
  #heard = false;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #synced: Promise<void> | undefined;

  constructor(options: WatchCacheOptions) {
    this.#client = options.client;
    this.#resource = options.resource;
    this.#namespace = options.namespace;
    this.#namespaces = options.namespaces;
    this.#hooks = options;
    this.#timeoutSeconds =
      options.watchTimeoutSeconds ?? (() => Math.round(300 + Math.random() * 300));
    this.#backoff = options.backoffMs ?? { min: 200, max: 30_000 };
    this.#pageSize = options.pageSize ?? 500;
  }

  get resource(): ApiResource {
    return this.#resource;
  }

  get namespace(): string | undefined {
    return this.#namespace;
  }

  /** The newest version seen: the list's, an event's or a bookmark's. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  get size(): number {
    return this.#objects.size;
  }

  /** Lists, then watches; resolves once the list is in (rejects when it fails). */
  start(): Promise<void> {
    this.#synced ??= this.#list(false).then(() => this.#startWatch());
    return this.#synced;
  }

  /** The cached objects (compact form, frozen: shared with every reader), of one namespace or all. */
  items(namespace?: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const e of this.#objects.values()) {
      if (namespace === undefined || e.namespace === namespace) out.push(e.object);
    }
    return out;
  }

  /** One cached object (compact form, frozen). */
  get(namespace: string, name: string): KubeObject | undefined {
    return this.#objects.get(keyOf(namespace, name))?.object;
  }

  close(): void {
    this.#closed = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#request?.abort();
  }

  /** Whether objects of `namespace` are kept. */
  #keeps(namespace: string): boolean {
    return !this.#namespaces || this.#namespaces.has(namespace);
  }

  #typed(object: KubeObject): KubeObject {
    const r = this.#resource;
    object.apiVersion ??= apiVersionOf(r);
    object.kind ??= r.kind;
    return object;
  }

  #entry(object: KubeObject): Entry {
    const compact = deepFreeze(compactObject(this.#typed(object)));
    return {
      namespace: compact.metadata?.namespace ?? '',
      name: compact.metadata?.name ?? '',
      resourceVersion: String(compact.metadata?.resourceVersion ?? ''),
      object: compact,
    };
  }

  #store(object: KubeObject): Entry {
    const entry = this.#entry(object);
    this.#objects.set(keyOf(entry.namespace, entry.name), entry);
    return entry;
  }

  /**
   * One paginated list: the snapshot replaces the cache. On a re-list (after
   * 410) the differences to what was cached become events, so that nothing
   * that happened while the watch was gone is missed.
   */
  async #list(relist: boolean): Promise<void> {
    const path = resourcePath(this.#resource, this.#namespace);
    // Each page is compacted as it arrives: the parsed pages are not all held at once.
    let next = new Map<string, Entry>();
    let version = '';
    let cont: string | undefined;
    for (;;) {
      let page: {
        items?: KubeObject[];
        metadata?: { continue?: string; resourceVersion?: string };
      };
      try {
        page = (await this.#client.request('GET', path, 'list', {
          query: { limit: this.#pageSize, continue: cont },
        })) as typeof page;
      } catch (e) {
        // A continue token that expired mid-list: start over from the first page.
        if (cont && e instanceof KubeApiError && e.status === 410) {
          next = new Map();
          cont = undefined;
          continue;
        }
        throw e;
      }
      for (const item of page.items ?? []) {
        if (!this.#keeps(item.metadata?.namespace ?? '')) continue;
        const entry = this.#entry(item);
        next.set(keyOf(entry.namespace, entry.name), entry);
      }
      version = page.metadata?.resourceVersion ?? version;
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    const receivedAt = performance.now();
    const previous = this.#objects;
    this.#objects = next;
    if (relist) {
      for (const [key, entry] of next) {
        const before = previous.get(key);
        previous.delete(key);
        if (before?.resourceVersion === entry.resourceVersion) continue;
        this.#emit(before ? 'MODIFIED' : 'ADDED', entry, receivedAt, true);
      }
      for (const gone of previous.values()) this.#emit('DELETED', gone, receivedAt, true);
    }
    this.#resourceVersion = version;
    this.#hooks.onSize?.(this.#objects.size);
  }

  #emit(type: CacheEventType, entry: Entry, receivedAt: number, fromRelist: boolean): void {
    this.#hooks.onEvent?.({
      type,
      namespace: entry.namespace,
      name: entry.name,
      object: entry.object,
      receivedAt,
      fromRelist,
    });
  }

  async #watcher(): Promise<{ watch: Watch }> {
    this.#watch ??= (async () => {
      const lib: ClientNode = await import('@kubernetes/client-node');
      const c = this.#client.connection;
      const kc: KubeConfig = new lib.KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: c.name,
            server: c.server.replace(/\/+$/, ''),
            skipTLSVerify: Boolean(c.insecureSkipTLSVerify),
            ...(c.caData ? { caData: c.caData } : {}),
          },
        ],
        users: [{ name: 'qontract-reconcile', token: c.token }],
        contexts: [{ name: c.name, cluster: c.name, user: 'qontract-reconcile' }],
        currentContext: c.name,
      });
      return { watch: new lib.Watch(kc) };
    })();
    return this.#watch;
  }

  async #startWatch(): Promise<void> {
    if (this.#closed) return;
    const { watch } = await this.#watcher();
    const timeoutSeconds = this.#timeoutSeconds();
    // client-node aborts a watch silent for `requestTimeoutMs` (30 s; private in its types):
    // bookmarks come about once a minute, so it must outlast the server's own end of the watch.
    (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs =
      (timeoutSeconds + 30) * 1000;
    this.#expired = false;
    this.#watchOpenedAt = performance.now();
    this.#heard = false;
    this.#client.stats.count(this.#client.name, 'watch');
    const controller = await watch.watch(
      resourcePath(this.#resource, this.#namespace),
      {
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
      },
      (type: string, object: KubeObject) => this.#onWatchEvent(type, object),
      (error: unknown) => this.#onWatchEnd(error),
    );
    this.#request = controller;
    if (this.#closed) controller.abort();
  }

  #onWatchEvent(type: string, object: KubeObject): void {
    if (this.#closed) return;
    const receivedAt = performance.now();
    if (type === 'ERROR') {
      const status = object as { code?: number; message?: string };
      if (status.code === 410) this.#expired = true;
      else this.#hooks.onError?.(`watch error: ${status.message ?? JSON.stringify(object)}`);
      return;
    }
    this.#failures = 0;
    this.#heard = true;
    const version = String(object.metadata?.resourceVersion ?? '');
    if (version) this.#resourceVersion = version;
    if (type === 'BOOKMARK') return;
    const namespace = object.metadata?.namespace ?? '';
    // Another namespace's object: its version counts (above), nothing else.
    if (!this.#keeps(namespace)) return;
    const name = object.metadata?.name ?? '';
    if (type === 'DELETED') {
      const key = keyOf(namespace, name);
      const known = this.#objects.get(key);
      this.#objects.delete(key);
      const entry = known ?? this.#entry(object);
      this.#hooks.onSize?.(this.#objects.size);
      this.#emit('DELETED', entry, receivedAt, false);
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const before = this.#objects.get(keyOf(namespace, name));
    const entry = this.#store(object);
    if (!before) this.#hooks.onSize?.(this.#objects.size);
    this.#emit(type, entry, receivedAt, false);
  }

  #onWatchEnd(error: unknown): void {
    this.#request = undefined;
    if (this.#closed) return;
    const status = (error as { statusCode?: number } | null)?.statusCode;
    if (this.#expired || status === 410) {
      this.#hooks.onRestart?.('expired');
      this.#retry(() => this.#list(true).then(() => this.#startWatch()), false);
      return;
    }
    if (error) {
      this.#hooks.onRestart?.('error');
      this.#retry(() => this.#startWatch(), true);
      return;
    }
    this.#hooks.onRestart?.('closed');
    // A watch the server ends at once, silently, again and again (a proxy, say) is backed off.
    const abrupt = !this.#heard && performance.now() - this.#watchOpenedAt < 1_000;
    this.#retry(() => this.#startWatch(), abrupt);
  }

  /** Runs `step` now (or after the back-off when `failed`), and again with back-off while it throws. */
  #retry(step: () => Promise<void>, failed: boolean): void {
    if (failed) this.#failures += 1;
    const wait =
      this.#failures === 0
        ? 0
        : Math.min(this.#backoff.max, this.#backoff.min * 2 ** (this.#failures - 1));
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#closed) return;
      step().catch((e: unknown) => {
        this.#hooks.onError?.(e instanceof Error ? e.message : String(e));
        this.#retry(step, true);
      });
    }, wait);
  }
}
