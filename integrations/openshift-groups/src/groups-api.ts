import { type ClusterHandle, KubeApiError, type KubeObject } from '@qontract/openshift';
import type { GroupChange } from './plan.ts';

/** OpenShift's user groups; plain Kubernetes clusters do not serve it. */
const GROUP_KIND = 'Group.user.openshift.io';

/** How often a write refused as stale (409) is re-read and retried. */
const CONFLICT_ATTEMPTS = 5;
/** From how many managed groups one list of all groups is cheaper than a GET per group. */
const LIST_FROM = 3;

type GroupObject = KubeObject & { users?: string[] | null };

export function servesGroups(handle: ClusterHandle): boolean {
  return handle.catalog.has('Group', 'user.openshift.io');
}

/** The members of a group, or undefined when the group does not exist. */
export async function readGroupUsers(
  handle: ClusterHandle,
  group: string,
): Promise<string[] | undefined> {
  const obj = (await handle.client.get(handle.catalog.get(GROUP_KIND), undefined, group)) as
    | GroupObject
    | undefined;
  return obj ? [...(obj.users ?? [])] : undefined;
}

/**
 * The members of each of `groups` (undefined: the group does not exist),
 * with as few requests as it can: one list of all groups when several are
 * managed (a GET per group when that list is refused), a GET per group
 * otherwise.
 */
export async function readManagedGroups(
  handle: ClusterHandle,
  groups: readonly string[],
  limit: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<Map<string, string[] | undefined>> {
  if (groups.length >= LIST_FROM) {
    try {
      const all = (await limit(() =>
        handle.client.list(handle.catalog.get(GROUP_KIND)),
      )) as GroupObject[];
      const byName = new Map(all.map((g) => [g.metadata?.name ?? '', g]));
      return new Map(
        groups.map((name) => {
          const obj = byName.get(name);
          return [name, obj ? [...(obj.users ?? [])] : undefined];
        }),
      );
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 403)) throw e;
    }
  }
  const users = await Promise.all(groups.map((g) => limit(() => readGroupUsers(handle, g))));
  return new Map(groups.map((g, i) => [g, users[i]]));
}

/**
 * Applies one group's change as `oc adm groups new|add-users|remove-users`
 * would, in one write: creates the group (with its new members) when it is
 * missing, otherwise updates `users` with the resourceVersion it read; a
 * write refused as stale (409 Conflict, someone else changed the group) is
 * re-read and retried. Members not named in the change are kept.
 */
export async function applyGroupChange(
  handle: ClusterHandle,
  change: GroupChange,
  fieldManager: string,
): Promise<void> {
  const resource = handle.catalog.get(GROUP_KIND);
  for (let attempt = 1; ; attempt++) {
    const current = (await handle.client.get(resource, undefined, change.group)) as
      | GroupObject
      | undefined;
    try {
      if (!current) {
        if (!change.create && change.add.length === 0) return;
        await handle.client.create(
          resource,
          undefined,
          {
            apiVersion: 'user.openshift.io/v1',
            kind: 'Group',
            metadata: { name: change.group },
            users: unique(change.add),
          },
          { fieldManager },
        );
        return;
      }
      const users = current.users ?? [];
      const next = unique([...users.filter((u) => !change.remove.includes(u)), ...change.add]);
      if (next.length === users.length && next.every((u, i) => u === users[i])) return;
      await handle.client.replace(
        resource,
        undefined,
        change.group,
        { ...current, users: next },
        { fieldManager },
      );
      return;
    } catch (e) {
      // AlreadyExists (created meanwhile) and Conflict (stale resourceVersion) are both 409.
      if (!(e instanceof KubeApiError && e.status === 409) || attempt >= CONFLICT_ATTEMPTS) throw e;
    }
  }
}

function unique(users: readonly string[]): string[] {
  return [...new Set(users)];
}
