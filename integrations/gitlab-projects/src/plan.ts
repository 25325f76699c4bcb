import { pyStrRepr } from '@qontract/pycompat';

/** A project of a requested group to create, and whether it is a SaaS bundle repository. */
export interface ProjectAction {
  readonly group: string;
  readonly project: string;
  readonly url: string;
  /** `resource: bundle`: the new project also gets a README on master and the staging and production branches. */
  readonly bundle: boolean;
}

/** A requested project that is not created: its URL is no code component. */
export interface ProjectProblem {
  readonly group: string;
  readonly project: string;
  readonly message: string;
}

export interface CodeComponent {
  readonly url: string;
  readonly resource: string;
}

/**
 * The original's gitlab-projects plan for one requested group: every project
 * requested and not in the group (by name) is created, but only when
 * `<server>/<group>/<project>` is the URL of some app's code component;
 * otherwise it is a problem and skipped. Nothing is ever deleted.
 * `projectUrl` builds the URL as the GitLab client does.
 */
export function planGroupProjects(input: {
  readonly group: string;
  readonly requested: readonly string[];
  readonly existing: ReadonlySet<string>;
  readonly codeComponents: readonly CodeComponent[];
  readonly projectUrl: (group: string, project: string) => string;
}): { actions: ProjectAction[]; problems: ProjectProblem[] } {
  const known = new Set(input.codeComponents.map((c) => c.url));
  const bundles = new Set(
    input.codeComponents.filter((c) => c.resource === 'bundle').map((c) => c.url),
  );
  const actions: ProjectAction[] = [];
  const problems: ProjectProblem[] = [];
  const { group } = input;
  for (const project of new Set(input.requested)) {
    if (input.existing.has(project)) continue;
    const url = input.projectUrl(group, project);
    if (!known.has(url)) {
      problems.push({ group, project, message: `${url} missing from all codeComponents` });
      continue;
    }
    actions.push({ group, project, url, bundle: bundles.has(url) });
  }
  return { actions, problems };
}

/** The original's log lines of a creation: `['create_project', group, project]` (and the bundle set-up). */
export function describeProjectAction(action: ProjectAction): string[] {
  const line = (name: string) =>
    `[${[name, action.group, action.project].map(pyStrRepr).join(', ')}]`;
  return action.bundle
    ? [line('create_project'), line('initiate_saas_bundle_repo')]
    : [line('create_project')];
}

/** What the summary counts for a creation. */
export function projectActionCounts(action: ProjectAction): string[] {
  return action.bundle ? ['create_project', 'initiate_saas_bundle_repo'] : ['create_project'];
}
