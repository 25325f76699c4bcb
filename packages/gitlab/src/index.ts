/** @public The client API of issue 15, consumed by gitlab-members, gitlab-projects and saas-deploy. */
export { ACCESS_LEVELS, accessLevel, accessLevelName } from './access-levels.ts';
/** @public The client API of issue 15, consumed by gitlab-members, gitlab-projects and saas-deploy. */
// Types only: the client itself (gitbeaker) is loaded when a run first asks for it
// (`gitlabApi`), not by every command that imports the registry.
export type {
  ClosableGitlabApi,
  GitlabApi,
  GitlabApiOptions,
  GitlabFile,
  GitlabFileAction,
  GitlabGroup,
  GitlabGroupMember,
  GitlabInstanceSettings,
  GitlabMergeRequest,
  GitlabProject,
  NewGitlabMergeRequest,
} from './api.ts';
/** @public The client API of issue 15, consumed by gitlab-members, gitlab-projects and saas-deploy. */
export { gitlabApi, gitlabClientKey } from './client.ts';
