import { errorMessage, QontractError } from '@qontract/core';
import { type PyDict, type PyObject, parseResource } from '@qontract/openshift';
import { parseTemplateVariables, renderTemplate, TemplateError } from '@qontract/templating';
import type { ObjectTemplate, TektonProvider } from './providers.ts';

/** The Task and Pipeline templates of a run, rendered and parsed, by `templateKey`. */
export type RenderedTemplates = ReadonlyMap<string, PyObject | PyDict>;

/** A template renders the same for every saas file: its resource and its variables decide it. */
export function templateKey(template: ObjectTemplate): string {
  return `${template.path}\u0000${template.variables ?? ''}`;
}

/**
 * Renders every template of the providers once (the original's
 * `load_tkn_template`): the app-interface resource at `path` through Jinja2
 * with strict undefined and the template's `variables`, then read as YAML.
 * A failure names the template and its resource.
 */
export async function renderProviderTemplates(
  providers: readonly TektonProvider[],
  readResource: (path: string) => Promise<string>,
): Promise<RenderedTemplates> {
  const templates = new Map<string, ObjectTemplate>();
  for (const p of providers) {
    for (const t of [...p.taskTemplates, p.pipelineTemplate]) templates.set(templateKey(t), t);
  }
  const rendered = await Promise.all(
    [...templates].map(async ([key, t]) => [key, await renderOne(t, readResource)] as const),
  );
  return new Map(rendered);
}

async function renderOne(
  template: ObjectTemplate,
  readResource: (path: string) => Promise<string>,
): Promise<PyObject | PyDict> {
  const where = `tekton template ${template.name} (${template.path})`;
  try {
    const variables = template.variables ? parseTemplateVariables(template.variables) : {};
    const text = await renderTemplate(await readResource(template.path), {
      type: 'jinja2',
      path: template.path,
      variables,
      // The original renders a plain jinja2.Template: no Vault, GitHub or query() helpers.
      helpers: {},
    });
    return parseResource(text);
  } catch (e) {
    // A TemplateError already names the path and line.
    throw e instanceof TemplateError
      ? e
      : new QontractError(`${where}: ${errorMessage(e)}`, { cause: e });
  }
}
