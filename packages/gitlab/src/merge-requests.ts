import type { Gitlab } from '@gitbeaker/rest';
import { z } from 'zod';
import type { GitlabApi, GitlabMergeRequest } from './api.ts';

/** Runs one GitLab call; its failure becomes a QontractError about `what` (createGitlabApi's). */
type Call = <T>(what: string, fn: () => Promise<unknown>, parse: (v: unknown) => T) => Promise<T>;

type MergeRequestCalls = Pick<
  GitlabApi,
  | 'defaultBranch'
  | 'listOpenMergeRequests'
  | 'createBranch'
  | 'deleteBranch'
  | 'commitFiles'
  | 'hasChanges'
  | 'createMergeRequest'
  | 'addMergeRequestNote'
  | 'closeMergeRequest'
  | 'mergeRequestPipelineStatuses'
>;

const MergeRequestBody = z.object({
  iid: z.number(),
  title: z.string(),
  description: z.string().nullable(),
  labels: z.array(z.string()),
  source_branch: z.string(),
  web_url: z.string(),
  has_conflicts: z.boolean().optional(),
});
const toMergeRequest = (v: unknown): GitlabMergeRequest => {
  const m = MergeRequestBody.parse(v);
  return {
    iid: m.iid,
    title: m.title,
    description: m.description ?? '',
    labels: m.labels,
    sourceBranch: m.source_branch,
    webUrl: m.web_url,
    hasConflicts: m.has_conflicts ?? false,
  };
};

/**
 * The merge-request calls of a project (the original's app-interface MR
 * client, for saas-auto-promotions-manager): branches, a multi-file commit,
 * compare, merge requests, notes, pipelines. Each failure names the project
 * and the MR or branch.
 */
export function mergeRequestCalls(
  gitlab: InstanceType<typeof Gitlab>,
  call: Call,
): MergeRequestCalls {
  return {
    defaultBranch: (projectPath) =>
      call(
        `GitLab project '${projectPath}'`,
        () => gitlab.Projects.show(projectPath),
        (v) => z.object({ default_branch: z.string() }).parse(v).default_branch,
      ),

    listOpenMergeRequests: (projectPath) =>
      call(
        `open merge requests of GitLab project '${projectPath}'`,
        () => gitlab.MergeRequests.all({ projectId: projectPath, state: 'opened', perPage: 100 }),
        (v) => z.array(z.unknown()).parse(v).map(toMergeRequest),
      ),

    createBranch: (projectPath, branch, ref) =>
      call(
        `creating branch '${branch}' of GitLab project '${projectPath}'`,
        () => gitlab.Branches.create(projectPath, branch, ref),
        () => undefined,
      ),

    deleteBranch: (projectPath, branch) =>
      call(
        `deleting branch '${branch}' of GitLab project '${projectPath}'`,
        () => gitlab.Branches.remove(projectPath, branch),
        () => undefined,
      ),

    commitFiles: (projectPath, branch, message, actions) =>
      call(
        `committing ${actions.map((a) => a.filePath).join(', ')} on branch '${branch}' of GitLab project '${projectPath}'`,
        () =>
          gitlab.Commits.create(
            projectPath,
            branch,
            message,
            actions.map((a) => ({ action: a.action, filePath: a.filePath, content: a.content })),
          ),
        () => undefined,
      ),

    hasChanges: (projectPath, from, to) =>
      call(
        `comparing '${from}' with '${to}' in GitLab project '${projectPath}'`,
        () => gitlab.Repositories.compare(projectPath, from, to),
        (v) => z.object({ diffs: z.array(z.unknown()) }).parse(v).diffs.length > 0,
      ),

    createMergeRequest: (projectPath, mr) =>
      call(
        `opening merge request '${mr.title}' in GitLab project '${projectPath}'`,
        () =>
          gitlab.MergeRequests.create(projectPath, mr.sourceBranch, mr.targetBranch, mr.title, {
            description: mr.description,
            labels: mr.labels.join(','),
            removeSourceBranch: mr.removeSourceBranch,
          }),
        toMergeRequest,
      ),

    addMergeRequestNote: (projectPath, iid, body) =>
      call(
        `commenting on merge request !${iid} of GitLab project '${projectPath}'`,
        () => gitlab.MergeRequestNotes.create(projectPath, iid, body),
        () => undefined,
      ),

    closeMergeRequest: (projectPath, iid) =>
      call(
        `closing merge request !${iid} of GitLab project '${projectPath}'`,
        () => gitlab.MergeRequests.edit(projectPath, iid, { stateEvent: 'close' }),
        () => undefined,
      ),

    mergeRequestPipelineStatuses: (projectPath, iid) =>
      call(
        `pipelines of merge request !${iid} of GitLab project '${projectPath}'`,
        () => gitlab.MergeRequests.allPipelines(projectPath, iid, { perPage: 100 }),
        (v) =>
          z
            .array(z.object({ status: z.string() }))
            .parse(v)
            .map((p) => p.status),
      ),
  };
}
