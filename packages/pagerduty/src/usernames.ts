import { QontractError } from '@qontract/core';
import { pyStrRepr } from '@qontract/pycompat';

/** A `PagerDutyTarget_v1` of app-interface: a schedule or an escalation policy of one instance. */
export interface PagerDutyTargetRef {
  readonly name: string;
  readonly instance: { readonly name: string };
  readonly scheduleID?: string | null;
  readonly escalationPolicyID?: string | null;
}

/** The fields of an app-interface user that PagerDuty names are matched against. */
export interface PagerDutyUserRef {
  readonly org_username: string;
  readonly pagerduty_username?: string | null;
}

/** What to ask PagerDuty for one target. */
type PagerDutyResource =
  | { readonly kind: 'schedule'; readonly id: string }
  | { readonly kind: 'escalationPolicy'; readonly id: string };

/** A target names neither a schedule nor an escalation policy. */
class PagerDutyTargetError extends QontractError {}

/**
 * The resource a target points at, or a PagerDutyTargetError when it has
 * neither id. With both, the escalation policy wins, as in the original.
 * `onCall` checks this itself; callers may check all targets before any I/O.
 */
export function validatePagerDutyTarget(target: PagerDutyTargetRef): PagerDutyResource {
  if (target.escalationPolicyID != null) {
    return { kind: 'escalationPolicy', id: target.escalationPolicyID };
  }
  if (target.scheduleID != null) return { kind: 'schedule', id: target.scheduleID };
  throw new PagerDutyTargetError(
    `pagerduty ${target.name}: Either schedule_id or escalation_policy_id must be set!`,
  );
}

/** The name a user has in PagerDuty: `pagerduty_username`, else `org_username`. */
export function pagerDutyName(user: PagerDutyUserRef): string {
  return user.pagerduty_username || user.org_username;
}

/**
 * One target's step of the original's `get_usernames_from_pagerduty`: names
 * containing `nobody` are dropped, the rest cut at the first `+`; every user
 * whose PagerDuty name is on call is picked (in the order of `users`), and the
 * on-call names no user has are returned for the warning. Callers concatenate
 * the results of their targets, as the original does.
 */
export function usernamesFromPagerDuty<U extends PagerDutyUserRef>(
  onCallNames: readonly string[],
  users: readonly U[],
  pick: (user: U) => string = pagerDutyName,
): { usernames: string[]; notFound: string[] } {
  const names = onCallNames
    .filter((n) => !n.includes('nobody'))
    .map((n) => n.split('+', 1)[0] ?? n);
  if (names.length === 0) return { usernames: [], notFound: [] };
  const onCall = new Set(names);
  const known = new Set(users.map(pagerDutyName));
  return {
    usernames: users.filter((u) => onCall.has(pagerDutyName(u))).map(pick),
    notFound: names.filter((n) => !known.has(n)),
  };
}

/** The original's warning about on-call names without an app-interface user, for one user group. */
export function pagerDutyNotFoundWarning(usergroup: string, notFound: readonly string[]): string {
  return (
    `[${usergroup}] PagerDuty username not found in app-interface: [${notFound.map(pyStrRepr).join(', ')}]` +
    ' (hint: user files should contain pagerduty_username if it is different than org_username)'
  );
}
