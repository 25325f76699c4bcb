export { TemplateError } from './errors.ts';
export type { TemplateHelpers } from './helpers.ts';

export { parseTemplateVariables } from './qontract-filters.ts';
export {
  type RenderOptions,
  renderTemplate,
  type TemplateType,
  templateCacheSize,
} from './render-template.ts';
