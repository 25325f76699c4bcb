export { JenkinsApi, JenkinsRequestError, type JobBuildState } from './client.ts';
export { type JenkinsInstanceRef, JenkinsSettingsError, jenkinsMap } from './map.ts';
