export type { Octokit } from '@octokit/rest';
export { defaultGithubOrg } from './default-org.ts';
/** @public for clients made outside a run (benchmarks, tools) */
export { createOctokit, githubErrorMessage } from './octokit.ts';
export {
  /** @public the element type of `GithubOrgClients.orgs` */
  type GithubOrg,
  type GithubOrgClients,
  githubOrgs,
} from './orgs.ts';
/** @public repository reads of openshift-saas-deploy (through @qontract/saas) */
export {
  type GithubRepoFile,
  githubClientWithToken,
  listGithubFiles,
  readGithubFile,
  resolveGithubRef,
} from './repo-contents.ts';
