import { errorMessage, type RunContext } from '@qontract/core';
import type { GitlabApi } from '@qontract/gitlab';
import type { LimitFunction } from 'p-limit';

/** An addition to check: the user, the managed group's path, and the permissions that grant it. */
export interface Addition {
  readonly user: string;
  readonly path: string;
  readonly grantedBy: readonly string[];
}

/**
 * Desired users without a GitLab account. Upstream logs such a user as not
 * found, adds nothing and goes on, removals included, and exits 0. Here a wet
 * run warns (`…: not added`) and skips the addition; a dry-run, as the MR
 * check runs it, makes it an error, so the merge request asking for it fails.
 * Neither holds back a removal: the group's state is known.
 */
export interface GitlabAccounts {
  /**
   * Dry-run: looks up every user the plan adds (`GET /users?username=`, once
   * per user). A look-up that fails is an error of the group.
   */
  checkAdditions(additions: readonly Addition[]): Promise<void>;
  /** Wet run, after an addition failed: whether the user has no account; it is then reported. */
  isMissing(addition: Addition): Promise<boolean>;
}

export function gitlabAccounts(
  ctx: RunContext,
  gl: GitlabApi,
  limit: LimitFunction,
): GitlabAccounts {
  const lookups = new Map<string, Promise<boolean>>();
  const exists = (user: string): Promise<boolean> => {
    let found = lookups.get(user);
    if (!found) {
      found = limit(() => gl.userExists(user));
      lookups.set(user, found);
    }
    return found;
  };
  const reported = new Set<string>();
  const report = ({ user, path, grantedBy }: Addition) => {
    const key = `${path}\u0000${user}`;
    if (reported.has(key)) return;
    reported.add(key);
    const message = `[${path}] GitLab user '${user}' does not exist (org_username in permission ${grantedBy.join(', ')})`;
    // Scoped to the account: no removal depends on it.
    if (ctx.dryRun) ctx.errors.register(path, message, { removalScope: `user ${user}` });
    else ctx.log.warn(`${message}: not added`);
  };
  return {
    async checkAdditions(additions) {
      await Promise.all(
        additions.map(async (a) => {
          try {
            if (!(await exists(a.user))) report(a);
          } catch (e) {
            ctx.errors.register(a.path, `[${a.path}] ${errorMessage(e)}`, {
              removalScope: a.path,
            });
          }
        }),
      );
    },
    async isMissing(a) {
      if (await exists(a.user)) return false;
      report(a);
      return true;
    },
  };
}
