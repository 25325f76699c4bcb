/** @public The client API of issue 15, consumed by gitlab-members, gitlab-projects and saas-deploy. */
export { ACCESS_LEVELS, accessLevel, accessLevelName } from './access-levels.ts';
/** @public The client API of issue 15, consumed by gitlab-members, gitlab-projects and saas-deploy. */
export {
  type ClosableGitlabApi,
  createGitlabApi,
  type GitlabApi,
  type GitlabApiOptions,
  type GitlabGroup,
  type GitlabGroupMember,
  type GitlabInstanceSettings,
  GitlabNotFoundError,
  type GitlabProject,
} from './api.ts';
/** @public The client API of issue 15, consumed by gitlab-members, gitlab-projects and saas-deploy. */
export { gitlabApi, gitlabClientKey } from './client.ts';
