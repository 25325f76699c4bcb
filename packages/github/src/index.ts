export type { Octokit } from '@octokit/rest';
export { defaultGithubOrg } from './default-org.ts';
/** @public for clients made outside a run (benchmarks, tools) */
export { createOctokit } from './octokit.ts';
export {
  /** @public the element type of `GithubOrgClients.orgs` */
  type GithubOrg,
  type GithubOrgClients,
  githubOrgs,
} from './orgs.ts';
