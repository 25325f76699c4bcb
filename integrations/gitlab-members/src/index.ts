import { gqlClient } from '@qontract/app-interface';
import { defineIntegration, errorMessage, executeActions, type RunContext } from '@qontract/core';
import { type GitlabApi, type GitlabGroup, gitlabApi } from '@qontract/gitlab';
import {
  type PagerDutyInstanceRef,
  type PagerDutyMap,
  type PagerDutyTargetRef,
  pagerDutyMap,
  pagerDutyNotFoundWarning,
  usernamesFromPagerDuty,
} from '@qontract/pagerduty';
import pLimit from 'p-limit';
import { type Addition, gitlabAccounts } from './accounts.ts';
import {
  desiredGroupMembers,
  type GitlabGroupPermission,
  gitlabPermissions,
  grantingPermissions,
  pagerDutyTargetKey,
  permissionsOfGroup,
  singleInstance,
} from './desired.ts';
import { GitlabMembersInstancesDocument } from './gitlab-instances.generated.ts';
import { GitlabMembersPagerDutyInstancesDocument } from './pagerduty-instances.generated.ts';
import { GitlabMembersPermissionsDocument } from './permissions.generated.ts';
import { describeMemberAction, type MemberAction, planGroupMembers } from './plan.ts';
import { GitlabMembersUsersDocument } from './users.generated.ts';

/** The original declares no version; the CLI's convention for integrations without one. */
const QONTRACT_INTEGRATION_VERSION = '0.1.0';
/** Groups read at once, and writes in flight at once (the original has no option for it). */
const CONCURRENCY = 10;

/** One change of one group, with the group it is written to. */
interface MemberStep {
  /** The managed group's full path (app-interface's name for it). */
  readonly path: string;
  readonly group: GitlabGroup;
  readonly change: MemberAction;
  /** The permissions that grant the user (named when its account is missing). */
  readonly grantedBy: readonly string[];
}

type User = { readonly org_username: string; readonly pagerduty_username: string | null };

export const gitlabMembers = defineIntegration({
  name: 'gitlab-members',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Manages the members of GitLab groups from roles and PagerDuty schedules.',
  options: {},
  run: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const [{ instances }, { permissions }, { users }, { pagerduty_instances }] = await Promise.all([
      gql.query(GitlabMembersInstancesDocument),
      gql.query(GitlabMembersPermissionsDocument),
      gql.query(GitlabMembersUsersDocument),
      gql.query(GitlabMembersPagerDutyInstancesDocument),
    ]);
    const instance = singleInstance(instances);
    const gl = await gitlabApi(ctx, instance);
    const onCall = onCallReader(ctx, pagerduty_instances ?? [], users ?? [], new Date());
    const all = gitlabPermissions(permissions);

    const limit = pLimit(CONCURRENCY);
    const perGroup = await Promise.all(
      [...new Set(instance.managedGroups)].map((path) =>
        limit(() => planGroup(ctx, gl, path, permissionsOfGroup(all, path), onCall)),
      ),
    );
    const steps = perGroup.flat();
    const accounts = gitlabAccounts(ctx, gl, limit);
    const addition = ({ path, change, grantedBy }: MemberStep): Addition => ({
      user: change.user,
      path,
      grantedBy,
    });
    if (ctx.dryRun) {
      await accounts.checkAdditions(
        steps.filter((s) => s.change.action === 'add_user_to_group').map(addition),
      );
    }
    await executeActions(
      ctx,
      steps,
      {
        name: (step) => step.change.action,
        describe: (step) => describeMemberAction(step.change),
        planEntry: ({ path, change }) => ({ ...change, groupPath: path }),
        destructive: (step) => step.change.action === 'remove_user_from_group',
        // A failure or a removal concerns its group only.
        removalScope: (step) => step.path,
        execute: async (step) => {
          try {
            return await write(gl, step);
          } catch (e) {
            // The user is looked up again only when an addition failed.
            if (step.change.action !== 'add_user_to_group') throw e;
            if (await accounts.isMissing(addition(step))) return 'skipped';
            throw e;
          }
        },
        failure: ({ path, change }, e) => ({
          scope: path,
          message: `[${path}] ${change.action} ${change.user}: ${errorMessage(e)}`,
        }),
      },
      { concurrency: CONCURRENCY },
    );
  },
  desiredStateForEarlyExit: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const [{ instances }, { permissions }] = await Promise.all([
      gql.query(GitlabMembersInstancesDocument),
      gql.query(GitlabMembersPermissionsDocument),
    ]);
    return { instance: singleInstance(instances), permissions: gitlabPermissions(permissions) };
  },
});

/**
 * The plan of one managed group. A group that cannot be read completely (it
 * does not exist, GitLab or PagerDuty fails) registers an error naming it and
 * gets no action at all: a partial desired state would remove or demote
 * members who should stay. The error holds back that group's removals only.
 */
async function planGroup(
  ctx: RunContext,
  gl: GitlabApi,
  path: string,
  permissions: readonly GitlabGroupPermission[],
  onCall: OnCallReader,
): Promise<MemberStep[]> {
  try {
    const group = await gl.getGroup(path);
    const [current, usernames] = await Promise.all([
      gl.listGroupMembers(group),
      onCall(
        path,
        permissions.flatMap((p) => p.pagerduty ?? []),
      ),
    ]);
    const desired = desiredGroupMembers(permissions, usernames);
    return planGroupMembers(group.name, current, desired).map((change) => ({
      path,
      group,
      change,
      grantedBy:
        change.action === 'add_user_to_group'
          ? grantingPermissions(permissions, usernames, change.user)
          : [],
    }));
  } catch (e) {
    ctx.errors.register(path, `[${path}] ${errorMessage(e)}`, { removalScope: path });
    return [];
  }
}

async function write(gl: GitlabApi, { group, change }: MemberStep): Promise<void> {
  switch (change.action) {
    case 'add_user_to_group':
      return gl.addGroupMember(group, change.user, change.accessLevel);
    case 'change_access':
      return gl.changeGroupMemberAccess(group, change.userId, change.accessLevel);
    case 'remove_user_from_group':
      return gl.removeGroupMember(group, change.userId);
  }
}

/** The org usernames on call per target of a group, by `pagerDutyTargetKey`. */
type OnCallReader = (
  group: string,
  targets: readonly PagerDutyTargetRef[],
) => Promise<Map<string, readonly string[]>>;

/**
 * Asks PagerDuty once per target of the run (groups share targets), and only
 * when some permission names one: the map and its tokens are not needed
 * otherwise. On-call names without an app-interface user are warned about per
 * group, as the original does.
 */
function onCallReader(
  ctx: RunContext,
  instances: readonly PagerDutyInstanceRef[],
  users: readonly User[],
  now: Date,
): OnCallReader {
  let map: Promise<PagerDutyMap> | undefined;
  const names = new Map<string, Promise<string[]>>();
  const onCallNames = (target: PagerDutyTargetRef) => {
    const key = pagerDutyTargetKey(target);
    let pending = names.get(key);
    if (!pending) {
      map ??= pagerDutyMap(ctx, instances);
      pending = map.then((pd) => pd.onCall(target, now));
      names.set(key, pending);
    }
    return pending;
  };
  return async (group, targets) => {
    const out = new Map<string, readonly string[]>();
    for (const target of targets) {
      const { usernames, notFound } = usernamesFromPagerDuty(
        await onCallNames(target),
        users,
        (u) => u.org_username,
      );
      if (notFound.length > 0) ctx.log.warn(pagerDutyNotFoundWarning(group, notFound));
      out.set(pagerDutyTargetKey(target), usernames);
    }
    return out;
  };
}
