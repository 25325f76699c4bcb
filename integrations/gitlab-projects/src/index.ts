import { gqlClient } from '@qontract/app-interface';
import {
  defineIntegration,
  errorMessage,
  executeActions,
  QontractError,
  type RunContext,
} from '@qontract/core';
import { type GitlabApi, type GitlabGroup, gitlabApi } from '@qontract/gitlab';
import pLimit from 'p-limit';
import { GitlabProjectsCodeComponentsDocument } from './code-components.generated.ts';
import {
  GitlabProjectsInstancesDocument,
  type GitlabProjectsInstancesQuery,
} from './gitlab-instances.generated.ts';
import {
  type CodeComponent,
  describeProjectAction,
  type ProjectAction,
  planGroupProjects,
  projectActionCounts,
} from './plan.ts';

/** The original declares no version; the CLI's convention for integrations without one. */
const QONTRACT_INTEGRATION_VERSION = '0.1.0';
/** Groups read at once, and projects created at once (the original has no option for it). */
const CONCURRENCY = 10;

type Instance = NonNullable<GitlabProjectsInstancesQuery['instances']>[number];

interface ProjectStep {
  readonly group: GitlabGroup;
  readonly action: ProjectAction;
}

export const gitlabProjects = defineIntegration({
  name: 'gitlab-projects',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Creates the GitLab projects requested in app-interface.',
  options: {},
  run: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const [{ instances }, { apps }] = await Promise.all([
      gql.query(GitlabProjectsInstancesDocument),
      gql.query(GitlabProjectsCodeComponentsDocument),
    ]);
    const instance = firstInstance(instances);
    const requests = instance.projectRequests ?? [];
    if (requests.length === 0) {
      ctx.log.info(`GitLab instance ${instance.name} requests no project`);
      return;
    }
    const gl = await gitlabApi(ctx, instance);
    const codeComponents = (apps ?? []).flatMap((a) => a.codeComponents ?? []);

    const limit = pLimit(CONCURRENCY);
    const perGroup = await Promise.all(
      requests.map((request) =>
        limit(() => planGroup(ctx, gl, request.group, request.projects, codeComponents)),
      ),
    );
    const steps = perGroup.flat();
    await executeActions(
      ctx,
      steps,
      {
        name: () => 'create_project',
        describe: ({ action }) => describeProjectAction(action),
        planEntry: ({ action }) => ({ ...action }),
        counts: ({ action }) => projectActionCounts(action),
        destructive: () => false,
        execute: async ({ group, action }) => {
          const project = await gl.createProject(group, action.project);
          if (action.bundle) await gl.initiateSaasBundleRepo(project);
        },
        failure: ({ action }, e) => ({
          scope: `${action.group}/${action.project}`,
          message: `[${action.group}] project ${action.project}: ${errorMessage(e)}`,
        }),
      },
      { concurrency: CONCURRENCY },
    );
  },
  desiredStateForEarlyExit: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const { instances } = await gql.query(GitlabProjectsInstancesDocument);
    return { instance: firstInstance(instances) };
  },
});

/** The original takes the first instance and refuses none. */
function firstInstance(instances: readonly Instance[] | null): Instance {
  const [first] = instances ?? [];
  if (!first) throw new QontractError('no GitLab instance found');
  return first;
}

/**
 * The projects to create in one requested group. A group that cannot be read
 * registers an error naming it; the other groups go on. Requested projects
 * that are no code component register an error each and are not created.
 */
async function planGroup(
  ctx: RunContext,
  gl: GitlabApi,
  path: string,
  requested: readonly string[],
  codeComponents: readonly CodeComponent[],
): Promise<ProjectStep[]> {
  let group: GitlabGroup;
  let existing: Set<string>;
  try {
    group = await gl.getGroup(path);
    existing = new Set((await gl.listGroupProjects(group)).map((p) => p.name));
  } catch (e) {
    ctx.errors.register(path, `[${path}] ${errorMessage(e)}`);
    return [];
  }
  const { actions, problems } = planGroupProjects({
    group: path,
    requested,
    existing,
    codeComponents,
    projectUrl: (g, p) => gl.projectUrl(g, p),
  });
  for (const problem of problems) {
    ctx.errors.register(`${problem.group}/${problem.project}`, problem.message);
  }
  return actions.map((action) => ({ group, action }));
}
