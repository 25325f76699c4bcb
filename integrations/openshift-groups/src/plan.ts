import { type GroupMember, memberKey } from './desired.ts';

const GroupActionName = {
  createGroup: 'create_group',
  addUser: 'add_user_to_group',
  delUser: 'del_user_from_group',
  deleteGroup: 'delete_group',
} as const;
type GroupActionName = (typeof GroupActionName)[keyof typeof GroupActionName];

/** One step of the plan, in the original's shape (`user` is null for group actions). */
export interface GroupAction {
  readonly action: GroupActionName;
  readonly cluster: string;
  readonly group: string;
  readonly user: string | null;
}

/**
 * The original's diff and order: for each wanted member that is missing, a
 * `create_group` (once, when the cluster has no member in that group today)
 * and an `add_user_to_group`; for each member that is not wanted, a
 * `delete_group` (once, when nobody is wanted in that group) and a
 * `del_user_from_group`. Then, keeping that order within each class,
 * `create_group` and `del_user_from_group` come before `add_user_to_group`
 * and `delete_group`.
 */
export function planGroupActions(
  current: readonly GroupMember[],
  desired: readonly GroupMember[],
): GroupAction[] {
  const actions = [
    ...subtract(desired, current, GroupActionName.addUser, GroupActionName.createGroup),
    ...subtract(current, desired, GroupActionName.delUser, GroupActionName.deleteGroup),
  ];
  const first = (a: GroupAction) =>
    a.action === GroupActionName.createGroup || a.action === GroupActionName.delUser ? 0 : 1;
  // Array.prototype.sort is stable, as Python's list.sort.
  return actions.sort((a, b) => first(a) - first(b));
}

function subtract(
  from: readonly GroupMember[],
  minus: readonly GroupMember[],
  userAction: GroupActionName,
  groupAction: GroupActionName,
): GroupAction[] {
  const present = new Set(minus.map(memberKey));
  const groupsOf = new Set(minus.map((m) => `${m.cluster}\u0000${m.group}`));
  const seenGroupActions = new Set<string>();
  const out: GroupAction[] = [];
  for (const m of from) {
    if (present.has(memberKey(m))) continue;
    const groupKey = `${m.cluster}\u0000${m.group}`;
    if (!groupsOf.has(groupKey) && !seenGroupActions.has(groupKey)) {
      seenGroupActions.add(groupKey);
      out.push({ action: groupAction, cluster: m.cluster, group: m.group, user: null });
    }
    out.push({ action: userAction, cluster: m.cluster, group: m.group, user: m.user });
  }
  return out;
}

/**
 * The (cluster, group) pairs of the plan that are not listed in that
 * cluster's `managedGroups`, in plan order: the original refuses to act on
 * any of the plan when one exists.
 */
export function invalidCombinations(
  actions: readonly GroupAction[],
  managedGroups: ReadonlyArray<{
    readonly name: string;
    readonly managedGroups?: readonly string[] | null;
  }>,
): Array<{ cluster: string; group: string }> {
  const valid = new Set<string>();
  for (const c of managedGroups) {
    for (const g of c.managedGroups ?? []) valid.add(`${c.name}\u0000${g}`);
  }
  const seen = new Set<string>();
  const invalid: Array<{ cluster: string; group: string }> = [];
  for (const a of actions) {
    const key = `${a.cluster}\u0000${a.group}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!valid.has(key)) invalid.push({ cluster: a.cluster, group: a.group });
  }
  return invalid;
}

/** What to do to one group: the plan's actions of one (cluster, group), folded. */
export interface GroupChange {
  readonly cluster: string;
  readonly group: string;
  readonly create: boolean;
  readonly add: string[];
  readonly remove: string[];
}

/**
 * One write to one group and the plan's actions it carries out. Additions
 * (`create_group`, `add_user_to_group`) and removals (`del_user_from_group`)
 * of a group are separate steps: the run executes every addition before any
 * removal, and removals only while no error is registered. `delete_group`
 * is a removal of its own with no change: it is never executed (as upstream).
 */
export interface GroupStep {
  readonly actions: readonly GroupAction[];
  readonly change?: GroupChange;
  readonly removal: boolean;
}

/**
 * Folds the plan into steps, so that each group is read and written at most
 * once per kind of change however many members change, keeping plan order.
 */
export function groupSteps(actions: readonly GroupAction[]): GroupStep[] {
  type Step = { actions: GroupAction[]; change?: GroupChange; removal: boolean };
  const byKey = new Map<string, Step>();
  const ordered: Step[] = [];
  for (const a of actions) {
    const removal =
      a.action === GroupActionName.delUser || a.action === GroupActionName.deleteGroup;
    const key = `${a.action === GroupActionName.deleteGroup ? 'd' : removal ? 'r' : 'w'}\u0000${a.cluster}\u0000${a.group}`;
    let step = byKey.get(key);
    if (!step) {
      step = { actions: [], removal };
      if (a.action !== GroupActionName.deleteGroup) {
        step.change = { cluster: a.cluster, group: a.group, create: false, add: [], remove: [] };
      }
      byKey.set(key, step);
      ordered.push(step);
    }
    step.actions.push(a);
    const change = step.change as { create: boolean; add: string[]; remove: string[] } | undefined;
    if (!change) continue;
    if (a.action === GroupActionName.createGroup) change.create = true;
    else if (a.action === GroupActionName.addUser && a.user !== null) change.add.push(a.user);
    else if (a.action === GroupActionName.delUser && a.user !== null) change.remove.push(a.user);
  }
  return ordered;
}
