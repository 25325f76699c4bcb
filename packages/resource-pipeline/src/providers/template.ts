import { errorMessage, QontractError } from '@qontract/core';
import type { OpenshiftResource } from '@qontract/openshift';
import { parseTemplateVariables } from '@qontract/templating';
import { cacheKey, type HelperCall } from '../desired-cache.ts';
import {
  describeResource,
  fields,
  type OpenshiftResourceData,
  type SelectedNamespace,
} from '../model.ts';
import { FetchResourceError, type ProviderContext, type TemplateType } from './context.ts';
import { type ContentOptions, fromContent } from './resource.ts';

/**
 * A rendered template (`resource-template`, a templated `prometheus-rule`)
 * built as a resource file; its text may hold secrets from the render.
 */
export async function buildTemplate(
  sel: SelectedNamespace,
  r: OpenshiftResourceData,
  file: { path: string; content: string },
  type: TemplateType,
  options: ContentOptions,
  pc: ProviderContext,
): Promise<OpenshiftResource> {
  const rendered = await render(sel, r, file, type, pc);
  return fromContent(rendered, file.path, pc, { ...options, rendered: true });
}

export function templateType(type: string, path: string): TemplateType {
  if (type === 'jinja2' || type === 'extracurlyjinja2') return type;
  throw new QontractError(`unknown template type '${type}' in ${path}`);
}

/**
 * A template's output: from the cache when the same template, variables and
 * namespace were rendered before and every lookup it made answers the same.
 * A template that reads the clock (`yesterday()`) is rendered every time.
 */
async function render(
  sel: SelectedNamespace,
  r: OpenshiftResourceData,
  file: { path: string; content: string },
  type: TemplateType,
  pc: ProviderContext,
): Promise<string> {
  const variables = templateVariables(sel, r);
  const { cache } = pc;
  const replay = pc.render.replay;
  if (!cache || !replay) return pc.render(file.content, { type, path: file.path, variables });
  const key = cacheKey('template', type, file.path, namespaceDigest(sel), JSON.stringify(r));
  const cached = await cache.rendered(key, pc.bundleSha, replay);
  if (cached !== undefined) return cached;
  const calls: HelperCall[] = [];
  let readsClock = false;
  const rendered = await pc.render(file.content, {
    type,
    path: file.path,
    variables,
    record: {
      call: (call) => calls.push(call),
      clock: () => {
        readsClock = true;
      },
    },
  });
  if (!readsClock) cache.keepRendered(key, rendered, calls, pc.bundleSha);
  return rendered;
}

const namespaceDigests = new WeakMap<SelectedNamespace, string>();

/** What a template sees of its namespace (`resource.namespace`), digested once per run. */
function namespaceDigest(sel: SelectedNamespace): string {
  let digest = namespaceDigests.get(sel);
  if (digest === undefined) {
    digest = cacheKey(JSON.stringify(sel.namespace), JSON.stringify(sel.openshiftResources));
    namespaceDigests.set(sel, digest);
  }
  return digest;
}

/**
 * The variables a template sees: its `variables`, and `resource` (the
 * openshiftResource as app-interface returns it, with `namespace` the whole
 * namespace object).
 */
function templateVariables(
  sel: SelectedNamespace,
  r: OpenshiftResourceData,
): Record<string, unknown> {
  const f = fields(r);
  let variables: Record<string, unknown> = {};
  if (f.variables) {
    try {
      // Python's json.loads: floats stay floats (1.0 prints as 1.0), dict order is kept.
      const parsed: unknown = parseTemplateVariables(f.variables);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        variables = parsed as Record<string, unknown>;
    } catch (e) {
      throw new FetchResourceError(
        `invalid variables of ${describeResource(r)}: ${errorMessage(e)}`,
      );
    }
  }
  return {
    ...variables,
    resource: { ...r, namespace: { ...sel.namespace, openshiftResources: sel.openshiftResources } },
  };
}
