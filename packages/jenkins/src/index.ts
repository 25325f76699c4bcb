// Exports marked @public are for openshift-saas-deploy-trigger-upstream-jobs (the trigger
// framework wires it: jenkins_instances_v1 → jenkinsMap → jobsState → @qontract/saas's decision).
export {
  /** @public the upstream-jobs trigger */
  JenkinsApi,
  /** @public the upstream-jobs trigger */
  JenkinsRequestError,
  /** @public the upstream-jobs trigger */
  type JobBuildState,
} from './client.ts';
export {
  /** @public the upstream-jobs trigger */
  type JenkinsInstanceRef,
  /** @public the upstream-jobs trigger */
  JenkinsSettingsError,
  /** @public the upstream-jobs trigger */
  jenkinsMap,
} from './map.ts';
