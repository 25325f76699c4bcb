import { QontractError } from '@qontract/core';
import { fullyQualifiedKind } from '@qontract/openshift';
import { type KubeObject, processTemplate } from '@qontract/openshift-template';
import { pyFloatRepr } from '@qontract/pycompat';
import type { SaasParameters } from '@qontract/saas';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

/** The only Template apiVersion `oc process` accepts from 4.19 on; the original forces it. */
const TEMPLATE_API_VERSION = 'template.openshift.io/v1';

/**
 * Where the template of a target lives, as a link (the original's `html_url`):
 * `<url>/blob/<ref><path>` for a template file, `/tree/` for a directory.
 * Error messages start with it and PrometheusRule rules carry it.
 */
export function htmlUrl(url: string, provider: string, ref: string, path: string): string {
  return `${url}/${provider === 'openshift-template' ? 'blob' : 'tree'}/${ref}${path}`;
}

/** Parses one YAML document (a template file). YAML 1.1, as PyYAML's safe_load reads it. */
export function parseTemplateFile(text: string, where: string): unknown {
  try {
    return parseYaml(text, { version: '1.1', uniqueKeys: false, maxAliasCount: 1000 });
  } catch (e) {
    throw new QontractError(`${where} is not valid YAML: ${e instanceof Error ? e.message : e}`);
  }
}

/** Every document of the files of a directory, in file order (the original's safe_load_all per file). */
export function parseDirectoryFiles(
  files: readonly { readonly name: string; readonly content: string }[],
  where: string,
): unknown[] {
  const out: unknown[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(file.content, { version: '1.1', uniqueKeys: false })) {
      if ('errors' in doc && doc.errors.length > 0) {
        throw new QontractError(
          `${where}: ${file.name} is not valid YAML: ${doc.errors[0]!.message}`,
        );
      }
      const value: unknown = doc.toJS({ maxAliasCount: 1000 });
      // An empty document (a trailing `---`) is None in PyYAML and is skipped later as a non-dict.
      out.push(value);
    }
  }
  return out;
}

/** The options of the parameters a template gets besides its saas file's. */
export interface TemplateDefaults {
  readonly commitSha: string;
  readonly hashLength: number;
  /** The saas file's `use_channel_in_image_tag` (only when it is the run's only saas file). */
  readonly useChannelInImageTag: boolean;
}

/**
 * `COMMIT_SHA` and `IMAGE_TAG` added when absent, as the original: the tag is
 * the first `hashLength` characters of the commit, or `<CHANNEL>-<that>` with
 * `use_channel_in_image_tag` (then `CHANNEL` is required).
 */
export function withTemplateDefaults(
  parameters: SaasParameters,
  defaults: TemplateDefaults,
  errorPrefix: string,
): SaasParameters {
  const out: SaasParameters = { ...parameters };
  if (!Object.hasOwn(out, 'COMMIT_SHA')) out.COMMIT_SHA = defaults.commitSha;
  const given = out.IMAGE_TAG;
  if (given === undefined || given === null || given === '') {
    const short = defaults.commitSha.slice(0, defaults.hashLength);
    if (defaults.useChannelInImageTag) {
      if (!Object.hasOwn(out, 'CHANNEL')) {
        throw new QontractError(
          `${errorPrefix} CHANNEL is required when 'use_channel_in_image_tag' is true.`,
        );
      }
      out.IMAGE_TAG = `${pyStr(out.CHANNEL)}-${short}`;
    } else {
      out.IMAGE_TAG = short;
    }
  }
  return out;
}

/**
 * Which of `REPO_DIGEST` / `IMAGE_DIGEST` the template declares while the
 * parameters leave them unset: those are looked up in the registry. As the
 * original, a declared parameter counts whether `required` or not.
 */
export function digestsNeeded(
  template: unknown,
  parameters: SaasParameters,
): { readonly repoDigest: boolean; readonly imageDigest: boolean } {
  const declared = new Set<string>();
  const list = (template as { parameters?: unknown } | null)?.parameters;
  if (Array.isArray(list)) {
    for (const p of list) {
      const name = (p as { name?: unknown } | null)?.name;
      if (typeof name === 'string') declared.add(name);
    }
  }
  const needed = (name: string) => declared.has(name) && !Object.hasOwn(parameters, name);
  return { repoDigest: needed('REPO_DIGEST'), imageDigest: needed('IMAGE_DIGEST') };
}

/** A parameter value as `oc process NAME=VALUE` gets it from the original (Python's `str`). */
function pyStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number')
    return Number.isInteger(value) ? String(value) : pyFloatRepr(value);
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * The objects of an OpenShift Template processed with the target's
 * parameters: `oc process --local --ignore-unknown-parameters` semantics
 * (packages/openshift-template), the template's apiVersion forced to
 * `template.openshift.io/v1` first, every value passed as text.
 */
export function processSaasTemplate(
  template: unknown,
  parameters: SaasParameters,
  source: string,
): KubeObject[] {
  if (template === null || typeof template !== 'object' || Array.isArray(template)) {
    throw new QontractError(`${source}: the template is not a YAML mapping`);
  }
  const given: Record<string, string> = {};
  for (const [k, v] of Object.entries(parameters)) given[k] = pyStr(v);
  return processTemplate({ ...template, apiVersion: TEMPLATE_API_VERSION }, given, {
    ignoreUnknownParameters: true,
    source,
  });
}

/** A document the original deploys: a mapping with `kind` and `apiVersion`. */
export interface ManagedDocument {
  readonly kind: string;
  readonly apiVersion: string;
  readonly metadata?: { readonly name?: unknown };
  readonly [key: string]: unknown;
}

/**
 * The documents of managed kinds (`Kind` or `Kind.group` in the saas file's
 * `managedResourceTypes`); the others are skipped with the original's info
 * lines (not errors).
 */
export function managedDocuments(
  documents: readonly unknown[],
  managedTypes: readonly string[],
  where: string,
  info: (line: string) => void,
): ManagedDocument[] {
  const out: ManagedDocument[] = [];
  const types = new Set(managedTypes);
  for (const doc of documents) {
    const d = doc as Record<string, unknown> | null;
    if (
      d === null ||
      typeof d !== 'object' ||
      Array.isArray(d) ||
      typeof d.kind !== 'string' ||
      typeof d.apiVersion !== 'string'
    ) {
      info(`Skipping non-dictionary resource on ${where}`);
      continue;
    }
    if (types.has(d.kind) || types.has(fullyQualifiedKind(d.kind, d.apiVersion))) {
      out.push(d as ManagedDocument);
    } else {
      info(`Skipping resource of kind ${d.kind} on ${where}`);
    }
  }
  return out;
}

/**
 * Every PrometheusRule rule with annotations gets `html_url` (where the rule
 * is defined), as the original; a rule list of another shape is left alone.
 */
export function annotatePrometheusRules(
  documents: readonly ManagedDocument[],
  url: string,
  warn: (line: string) => void,
): void {
  for (const doc of documents) {
    if (doc.kind !== 'PrometheusRule') continue;
    const groups = (doc.spec as { groups?: unknown } | undefined)?.groups;
    if (!Array.isArray(groups)) {
      warn(`could not add html_url annotation to ${String(doc.metadata?.name ?? '')}`);
      continue;
    }
    for (const group of groups) {
      const rules = (group as { rules?: unknown } | null)?.rules;
      if (!Array.isArray(rules)) continue;
      for (const rule of rules) {
        const annotations = (rule as { annotations?: unknown } | null)?.annotations;
        if (annotations && typeof annotations === 'object' && Object.keys(annotations).length > 0) {
          (annotations as Record<string, unknown>).html_url = url;
        }
      }
    }
  }
}
