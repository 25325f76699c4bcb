// The saas-file model shared by saas-file-validator and openshift-saas-deploy.
// Exports marked @public are there for openshift-saas-deploy (and its change tester).
export {
  changedSaasTargets,
  type SaasEnvironmentChange,
  /** @public the targets of a SaasEnvironmentChange */
  type SaasTargetChange,
} from './changes.ts';
export {
  /** @public the registry reads of openshift-saas-deploy and the images trigger */
  imageReadersForRun,
  /** @public the registry reads of openshift-saas-deploy and the images trigger */
  type RunImageReaders,
} from './image-readers.ts';
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
  /** @public saas-auto-promotions-manager finds a subscriber's dynamic targets */
  namespaceSelectedBy,
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
// Promotions of openshift-saas-deploy (uids, config hashes, channels, gate, state, publishing).
export {
  /** @public promotions of openshift-saas-deploy */
  type CodeComponentVersions,
  /** @public promotions of openshift-saas-deploy */
  codeComponentVersions,
  /** @public promotions of openshift-saas-deploy */
  type PromotionChannel,
  /** @public promotions of openshift-saas-deploy */
  promotionChannels,
  /** @public promotions of openshift-saas-deploy */
  type TargetPromotion,
  /** @public promotions of openshift-saas-deploy */
  targetConfigHash,
  /** @public promotions of openshift-saas-deploy */
  targetConfigState,
  /** @public the config trigger's state content */
  targetConfigStateModel,
  /** @public promotions of openshift-saas-deploy */
  targetPromotion,
  /** @public promotions of openshift-saas-deploy */
  targetUid,
  /** @public promotions of openshift-saas-deploy */
  usedForSecurity,
} from './promotions.ts';
export {
  /** @public promotions of openshift-saas-deploy */
  type PromotionGateError,
  /** @public promotions of openshift-saas-deploy */
  type PromotionGateResult,
  /** @public promotions of openshift-saas-deploy */
  validatePromotions,
} from './promotions-gate.ts';
export {
  /** @public promotions of openshift-saas-deploy */
  nextPromotionRecord,
  /** @public promotions of openshift-saas-deploy */
  type PromotionPublication,
  /** @public promotions of openshift-saas-deploy */
  planPromotionPublications,
  /** @public promotions of openshift-saas-deploy */
  publishPromotions,
} from './promotions-publish.ts';
export {
  /** @public promotions of openshift-saas-deploy */
  type PromotionRecord,
  /** @public promotions of openshift-saas-deploy */
  type PromotionRecordReader,
  /** @public promotions of openshift-saas-deploy */
  PromotionState,
  /** @public soak time of saas-auto-promotions-manager */
  parseCheckIn,
  /** @public promotions of openshift-saas-deploy */
  promotionKey,
} from './promotions-state.ts';
// Image validation and digests of openshift-saas-deploy (the registry client).
export {
  /** @public image validation of openshift-saas-deploy */
  type BasicCredentials,
  /** @public image validation of openshift-saas-deploy */
  createImageLookup,
  /** @public image validation of openshift-saas-deploy */
  type ImageAuth,
  /** @public image validation of openshift-saas-deploy */
  type ImageCheckTarget,
  /** @public REPO_DIGEST / IMAGE_DIGEST of openshift-saas-deploy */
  type ImageDigests,
  /** @public image validation of openshift-saas-deploy */
  type ImageLookup,
  /** @public image validation of openshift-saas-deploy */
  type ImageReference,
  /** @public image validation of openshift-saas-deploy */
  imageAuthFromSecret,
  /** @public REPO_DIGEST / IMAGE_DIGEST of openshift-saas-deploy */
  imageDigest,
  /** @public the images trigger */
  imageProblem,
  /** @public image validation of openshift-saas-deploy */
  type ManifestDigest,
  /** @public image validation of openshift-saas-deploy */
  parseImageReference,
  /** @public image validation of openshift-saas-deploy */
  RegistryClient,
  /** @public image validation of openshift-saas-deploy */
  type RegistryClientOptions,
  /** @public image validation of openshift-saas-deploy */
  RegistryError,
  /** @public image validation of openshift-saas-deploy */
  type TargetImageValidation,
  /** @public image validation of openshift-saas-deploy */
  validateTargetImages,
} from './registry.ts';
// The SLO gate of the configs trigger and saas-auto-promotions-manager (Prometheus instant queries).
export {
  /** @public the SLO gate */
  breachedSlosByKey,
  /** @public the SLO gate */
  type SloChecker,
  /** @public the SLO gate */
  type SloDetails,
  /** @public the SLO gate */
  type SloDocument,
  /** @public the SLO gate */
  sloCheckerForRun,
  /** @public the SLO gate */
  targetSloKeys,
} from './slo.ts';
// Git reads of openshift-saas-deploy (ref resolution, templates, directories).
export {
  /** @public git reads of openshift-saas-deploy */
  type RepoFile,
  /** @public git reads of openshift-saas-deploy */
  type RepoSourceRequests,
  /** @public git reads of openshift-saas-deploy */
  type RepoSources,
  /** @public git reads of openshift-saas-deploy */
  type RepoSourcesOptions,
  /** @public git reads of openshift-saas-deploy */
  repoSourcesForRun,
  requestPool,
} from './sources.ts';
// Tekton object names and durations shared by openshift-tekton-resources and the triggers.
export {
  /** @public the CD family's Tekton names */
  BadDurationError,
  /** @public the CD family's Tekton names */
  dhmsToSeconds,
  /** @public the CD family's Tekton names */
  secondsToHms,
  /** @public the CD family's Tekton names */
  TektonNameTooLongError,
  /** @public the CD family's Tekton names */
  tektonNamespaceObjectName,
  /** @public the CD family's Tekton names */
  tektonPipelineName,
  /** @public the CD family's Tekton names */
  tektonSaasFileTaskName,
} from './tekton.ts';
