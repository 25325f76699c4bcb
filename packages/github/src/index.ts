export { defaultGithubOrg } from './default-org.ts';
