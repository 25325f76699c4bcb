import { RunGenerations } from '@qontract/core';
import { KeptClusters } from '../cluster/cluster-map.ts';
import type { ClusterConnection, KubeObject } from '../cluster/kube-client.ts';

/**
 * What the runs of a loop know of one cluster connection (cluster, server,
 * credential, TLS setting): the role of gitops-engine's `ClusterCache`. Each
 * strategy keeps its own objects (relist.ts: the listed objects a list hands
 * out again where their bytes are unchanged; watch.ts: list+watch caches);
 * every state keeps the revisions of the scopes read from it.
 *
 * A scope is what one `CurrentStateSpec` reads (its kind, namespace and
 * names; the state is the cluster and credential). Its revision is a number
 * that stays the same between two reads exactly when they returned the same
 * objects in the same order, and changes otherwise. Objects are compared by
 * identity: both strategies hand out frozen objects, and the same object for
 * as long as it is unchanged (relist: the same bytes; watch: no event), so a
 * revision is a cheap key for whatever the engine derives from a scope.
 */
export class ClusterState {
  /** The connection's key (`connectionKey`). */
  readonly key: string;
  readonly #scopes = new Map<string, RevisedScope>();
  readonly #next: () => number;

  constructor(key: string, nextRevision: () => number) {
    this.key = key;
    this.#next = nextRevision;
  }

  /** The revision of `scope`, read in `read` (a number of `ClusterStates.beginRead`) with `items`. */
  revision(scope: string, items: readonly KubeObject[], read: number): number {
    const before = this.#scopes.get(scope);
    if (before && sameObjects(before.items, items)) {
      before.usedIn = Math.max(before.usedIn, read);
      return before.revision;
    }
    const revision = this.#next();
    this.#scopes.set(scope, { items, revision, usedIn: read });
    return revision;
  }

  /** Scopes whose revision is kept: for tests. */
  get revisedScopes(): number {
    return this.#scopes.size;
  }

  /** Forgets the scopes no read since `epoch` used. */
  dropScopes(epoch: number): void {
    for (const [key, scope] of this.#scopes) if (scope.usedIn < epoch) this.#scopes.delete(key);
  }
}

interface RevisedScope {
  readonly items: readonly KubeObject[];
  readonly revision: number;
  usedIn: number;
}

function sameObjects(a: readonly KubeObject[], b: readonly KubeObject[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The ClusterStates of one strategy in one loop, by connection. Reads may
 * overlap (the shards of one process): once none is under way, each state
 * forgets the scopes no read since the previous such moment used. Revisions
 * are numbered for the whole set, so a connection that comes back (a new
 * state) never repeats an earlier number of the loop.
 */
export class ClusterStates<S extends ClusterState> {
  readonly #states = new Map<string, S>();
  readonly #reads = new RunGenerations();
  readonly #make: (key: string, nextRevision: () => number) => S;
  #revision = 0;

  constructor(make: (key: string, nextRevision: () => number) => S) {
    this.#make = make;
  }

  /** The state of a connection, made on first use. */
  of(key: string): S {
    let state = this.#states.get(key);
    if (!state) {
      state = this.#make(key, () => ++this.#revision);
      this.#states.set(key, state);
    }
    return state;
  }

  /** A read begins: its number, for `ClusterState.revision` and `endRead`. */
  beginRead(): number {
    return this.#reads.begin();
  }

  /**
   * A read ended. Once none is under way, the scopes no read used since are
   * forgotten; `drop` says which states go with them (the relist states with
   * no scope left).
   */
  endRead(read: number, drop: (state: S) => boolean = (s) => s.revisedScopes === 0): void {
    this.#reads.end(read, (epoch) => {
      for (const [key, state] of this.#states) {
        state.dropScopes(epoch);
        if (drop(state)) this.#states.delete(key);
      }
    });
  }

  delete(key: string): void {
    this.#states.delete(key);
  }

  values(): IterableIterator<S> {
    return this.#states.values();
  }
}

/** The key of a cluster connection: the cluster, credential, server and TLS setting (a token only as a hash). */
export function connectionKey(connection: ClusterConnection, privileged: boolean): string {
  return KeptClusters.keyOf(connection, privileged);
}
