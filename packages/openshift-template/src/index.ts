/** @public The processor of issue 16, consumed by integrations-manager and openshift-saas-deploy. */
export { generateExpressionValue, type RandomInt } from './expression.ts';
/** @public The processor of issue 16, consumed by integrations-manager and openshift-saas-deploy. */
export {
  instantiateTemplate,
  type KubeObject,
  type ProcessedTemplate,
  type ProcessOptions,
  processTemplate,
  type Template,
} from './template.ts';
