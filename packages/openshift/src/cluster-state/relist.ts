import type { LoopScope } from '@qontract/core';
import { compactObject } from '../cluster/compact-object.ts';
import {
  type ClusterListedObjects,
  ListedObjects,
  type ListedObjectsRun,
} from '../cluster/listed-objects.ts';
import { ClusterState, ClusterStates, connectionKey } from './cluster-state.ts';
import {
  type CurrentStateSpec,
  type FetchedState,
  type ReadSettings,
  type ReadStrategy,
  readCurrentState,
} from './read-plan.ts';

/**
 * The relist strategy (polling runs): every read lists and GETs again. Where
 * the runs of a loop repeat in this process, each cluster connection's
 * ClusterState keeps what its lists returned (`ListedObjects`, under the
 * connection's key): an item whose bytes are those of the previous run's is
 * handed out as the (frozen) object made of them then instead of being
 * decoded again, which also makes the scopes' revisions known.
 */
class RelistStates extends ClusterStates<ClusterState> {
  readonly listed = new ListedObjects();

  constructor() {
    super((key, next) => new ClusterState(key, next));
  }
}

/**
 * The relist ClusterStates of `loop`: only where the runs repeat in this
 * process (run-integration), and not with `QONTRACT_LIST_REUSE=off` or
 * `QONTRACT_LOOP_CACHES=off`.
 */
function relistStatesOf(loop: LoopScope | undefined): RelistStates | undefined {
  if (!loop?.tuning.listReuse) return undefined;
  return loop.repeatCache('openshift:cluster-states:relist', () => new RelistStates());
}

/**
 * The current state of `specs` by the read plan, listing each time: what
 * `fetchCurrentState` does for polling runs, with the loop of `loop`.
 */
export async function relistCurrentState(
  specs: readonly CurrentStateSpec[],
  settings: ReadSettings & { readonly loop?: LoopScope | undefined },
): Promise<FetchedState[]> {
  const states = relistStatesOf(settings.loop);
  if (!states) return readCurrentState(specs, settings, relisting(undefined));
  const run = states.listed.beginRun();
  const read = states.beginRead();
  try {
    const result = await readCurrentState(specs, settings, relisting({ states, run, read }));
    settings.log.debug(
      `listed objects: ${run.counts.reused} unchanged since the previous run, ${run.counts.read} read`,
    );
    return result;
  } finally {
    run.end();
    states.endRead(read);
  }
}

/** The strategy of one read: through the run's cluster clients, reusing what the loop kept. */
function relisting(
  kept:
    | {
        readonly states: RelistStates;
        readonly run: ListedObjectsRun;
        readonly read: number;
      }
    | undefined,
): ReadStrategy {
  const reuses = new Map<string, ClusterListedObjects>();
  return {
    deadline: true,
    reader: (handle) => {
      const client = handle.client;
      const key = connectionKey(client.connection, handle.privileged);
      const state = kept?.states.of(key);
      let reuse = reuses.get(key);
      if (kept && !reuse) {
        reuse = kept.run.forCluster(key);
        reuses.set(key, reuse);
      }
      // What the engine keeps of a listed or fetched object: no managedFields field sets, no
      // last-applied copy.
      const options = { each: compactObject, reuse };
      return {
        list: ({ resource, namespace, namespaces }) =>
          client.list(resource, namespace, namespaces ? { ...options, namespaces } : options),
        get: (resource, namespace, name) => client.get(resource, namespace, name, options),
        revision: (scope, items) =>
          state && kept ? state.revision(scope, items, kept.read) : undefined,
      };
    },
  };
}
