export { DEFAULT_LIMITS, type RenderLimits } from './context.ts';
export { TemplateError } from './errors.ts';
export type { TemplateHelpers } from './helpers.ts';
export type { WhitespaceOptions } from './lexer.ts';
export { parseTemplateVariables } from './qontract-filters.ts';
export {
  type RenderOptions,
  renderTemplate,
  type TemplateType,
  templateCacheSize,
} from './render-template.ts';
