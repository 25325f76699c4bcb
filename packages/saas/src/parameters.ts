import { pyJsonDumps } from '@qontract/pycompat';
import type { SaasParameters } from './model.ts';

/**
 * The parameter layers of a target, lowest precedence first, as the original
 * consolidates them: environment, environment secrets, saas file, saas file
 * secrets, resource template, resource template secrets, target, target
 * secrets. Secret layers hold the values already read from Vault.
 */
export interface ParameterLayers {
  readonly environment?: SaasParameters | null;
  readonly environmentSecrets?: Readonly<Record<string, string>>;
  readonly saasFile?: SaasParameters | null;
  readonly saasFileSecrets?: Readonly<Record<string, string>>;
  readonly resourceTemplate?: SaasParameters | null;
  readonly resourceTemplateSecrets?: Readonly<Record<string, string>>;
  readonly target?: SaasParameters | null;
  readonly targetSecrets?: Readonly<Record<string, string>>;
}

/**
 * Parameter values as `oc process` gets them (the original's `adjust`):
 * `true`/`false` become the strings "true"/"false", maps and lists JSON text
 * (Python's `json.dumps`: sorted keys, `", "`/`": "` separators); strings,
 * numbers and null stay as they are.
 */
export function normalizeParameters(parameters: SaasParameters): SaasParameters {
  const out: SaasParameters = {};
  for (const [k, v] of Object.entries(parameters)) {
    if (v === true) out[k] = 'true';
    else if (v === false) out[k] = 'false';
    else if (v !== null && typeof v === 'object') out[k] = pyJsonDumps(v, { sortKeys: true });
    else out[k] = v;
  }
  return out;
}

/**
 * One substitution pass, as the original: for each parameter K with a string
 * value V (in insertion order), every literal `${K}` in every string value
 * (the current ones, so earlier replacements are visible) becomes V. No
 * recursion, no escaping; unknown `${X}` stay; order matters.
 */
export function substituteParameters(parameters: SaasParameters): SaasParameters {
  const out: SaasParameters = { ...parameters };
  for (const key of Object.keys(out)) {
    const replacement = out[key];
    if (typeof replacement !== 'string') continue;
    const pattern = `\${${key}}`;
    for (const [k, v] of Object.entries(out)) {
      if (typeof v === 'string' && v.includes(pattern)) out[k] = v.replaceAll(pattern, replacement);
    }
  }
  return out;
}

/**
 * The parameters of a target (the original's `TargetSpec.parameters`):
 * the layers merged lowest precedence first (a key keeps the position of its
 * first occurrence), non-secret layers normalized unless `adjust` is false
 * (helm gets raw values), then one `${K}` substitution pass.
 */
export function targetParameters(
  layers: ParameterLayers,
  options: { readonly adjust?: boolean } = {},
): SaasParameters {
  const adjust = options.adjust ?? true;
  const plain = (p: SaasParameters | null | undefined) =>
    p ? (adjust ? normalizeParameters(p) : { ...p }) : {};
  return substituteParameters({
    ...plain(layers.environment),
    ...layers.environmentSecrets,
    ...plain(layers.saasFile),
    ...layers.saasFileSecrets,
    ...plain(layers.resourceTemplate),
    ...layers.resourceTemplateSecrets,
    ...plain(layers.target),
    ...layers.targetSecrets,
  });
}
