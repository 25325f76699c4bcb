// The saas-file model shared by saas-file-validator and openshift-saas-deploy.
// Exports marked @public are there for openshift-saas-deploy (and its change tester).
export {
  /** @public image validation of openshift-saas-deploy */
  blockedImages,
  /** @public image validation of openshift-saas-deploy */
  collectImages,
  /** @public image validation of openshift-saas-deploy */
  type ImagePatternsBlockRule,
  /** @public image validation of openshift-saas-deploy */
  matchingImagePattern,
} from './images.ts';
export {
  loadSaasFiles,
  /** @public openshift-saas-deploy resolves then filters by --saas-file-name / --env-name */
  renderTargetTemplates,
  resolveSaasFiles,
  /** @public the options of loadSaasFiles */
  type SaasFileFilter,
  /** @public openshift-saas-deploy's `where` */
  selectSaasFiles,
} from './load.ts';
export {
  /** @public the (cluster, namespace) key of a target */
  namespaceKey,
  type RawSaasFile,
  type RawSaasTarget,
  type SaasFile,
  /** @public a target's namespace */
  type SaasNamespace,
  /** @public parameters of every level */
  type SaasParameters,
  type SaasResourceTemplate,
  type SaasTarget,
} from './model.ts';
export { isCommitSha, saasFileEnvCombo, secretPathAllowed } from './names.ts';
export {
  /** @public parameter handling of openshift-saas-deploy */
  normalizeParameters,
  /** @public the layers of targetParameters */
  type ParameterLayers,
  /** @public parameter handling of openshift-saas-deploy */
  substituteParameters,
  /** @public parameter handling of openshift-saas-deploy */
  targetParameters,
} from './parameters.ts';
