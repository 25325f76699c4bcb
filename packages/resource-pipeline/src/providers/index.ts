/**
 * The providers of an openshiftResource, one module each (`resource.ts`,
 * `template.ts`, `vault-secret.ts`, `route.ts`, `prometheus-rule.ts`); this
 * module picks the one a resource names.
 */
import type { OpenshiftResource } from '@qontract/openshift';
import { fields, type OpenshiftResourceData, type SelectedNamespace } from '../model.ts';
import { FetchResourceError, type ProviderContext } from './context.ts';
import { alertmanagerKey, ruleTemplateType } from './prometheus-rule.ts';
import { fromContent, plainFile, requiredFile } from './resource.ts';
import { route } from './route.ts';
import { buildTemplate, templateType } from './template.ts';
import { vaultSecret } from './vault-secret.ts';

export {
  DEFAULT_REPO_URL,
  FetchResourceError,
  type ProviderContext,
  type TemplateRenderer,
} from './context.ts';

/**
 * Builds the desired object of one openshiftResource (upstream
 * `reconcile/openshift_resources_base.py` `fetch_openshift_resource()`).
 */
export async function buildDesired(
  sel: SelectedNamespace,
  r: OpenshiftResourceData,
  pc: ProviderContext,
): Promise<OpenshiftResource> {
  const plain = plainFile(r);
  if (plain) {
    const { file, options } = plain;
    return fromContent(file.content, file.path, pc, {
      ...options,
      loaded: await pc.loaded?.get(file.content),
    });
  }
  const f = fields(r);
  switch (f.provider) {
    case 'resource-template': {
      const file = requiredFile(r);
      const type = templateType(f.type ?? 'jinja2', file.path);
      return buildTemplate(sel, r, file, type, { alertmanagerKey: alertmanagerKey(r) }, pc);
    }
    case 'prometheus-rule': {
      // A plain rule file is a plainFile above; this one is templated.
      const file = requiredFile(r);
      const type = ruleTemplateType(f.type ?? 'resource', file.path);
      return buildTemplate(sel, r, file, type, {}, pc);
    }
    case 'vault-secret':
      return vaultSecret(r, pc);
    case 'route':
      return route(r, pc);
    default:
      throw new FetchResourceError(`unknown provider: ${f.provider}`);
  }
}

/**
 * `buildDesired` without waiting where there is nothing to wait for: a
 * resource file used as it is (`resource`, a `prometheus-rule` of type
 * `resource`) while no worker thread is loading files (a warm run: most of
 * its objects are cache hits). Undefined where `buildDesired` must be awaited.
 * A warm run of 50,000 objects saves a promise chain per object.
 */
export function buildDesiredNow(
  r: OpenshiftResourceData,
  pc: ProviderContext,
): OpenshiftResource | undefined {
  if (pc.loaded) return undefined;
  const plain = plainFile(r);
  return plain && fromContent(plain.file.content, plain.file.path, pc, plain.options);
}
