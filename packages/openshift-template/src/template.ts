import { QontractError } from '@qontract/core';
import { z } from 'zod';
import { ExpressionError, generateExpressionValue, type RandomInt } from './expression.ts';
import { groupifiedApiVersion } from './legacy-groups.ts';

/**
 * `oc process --local` in TypeScript. The rules, and the order they run in,
 * are those of openshift/oc `pkg/cli/process/process.go` (parameter values
 * from the command line) and openshift/library-go
 * `pkg/template/templateprocessing/{template,object}.go` (the processing);
 * each rule below says which part of that code it follows.
 */

/** One object of a processed template: plain data, as `oc process -o json` prints it. */
export type KubeObject = Record<string, unknown>;

const parameterSchema = z.looseObject({
  name: z.string(),
  value: z.string().nullish(),
  generate: z.string().nullish(),
  from: z.string().nullish(),
  required: z.boolean().nullish(),
});

// oc decodes its input into a typed templatev1.Template before processing: the
// same fields, the same types; `null` is Go's zero value.
const templateSchema = z.looseObject({
  apiVersion: z.enum(['v1', 'template.openshift.io/v1']),
  kind: z.literal('Template'),
  metadata: z.looseObject({ name: z.string().nullish() }).nullish(),
  message: z.string().nullish(),
  labels: z.record(z.string(), z.string().nullable()).nullish(),
  parameters: z.array(parameterSchema).nullish(),
  objects: z.array(z.unknown()).nullish(),
});

/** An OpenShift Template (`template.openshift.io/v1`), the fields processing reads. */
export type Template = z.input<typeof templateSchema>;

export interface ProcessOptions {
  /** `oc process --ignore-unknown-parameters` (what qontract-reconcile always passes). */
  readonly ignoreUnknownParameters?: boolean;
  /** The random source of `generate: expression`: an integer in [0, n). Default: node:crypto. */
  readonly random?: RandomInt;
  /** How errors name the template (e.g. a repository path); default: its `metadata.name`. */
  readonly source?: string;
}

export interface ProcessedTemplate {
  readonly objects: KubeObject[];
  /** The template's `message`, substituted (`''` when it has none, as in OpenShift). */
  readonly message: string;
  /** Every parameter's final value: given, default or generated. */
  readonly parameters: Readonly<Record<string, string>>;
}

/** The objects `oc process --local -f template.json NAME=VALUE...` prints (its List's items). */
export function processTemplate(
  template: unknown,
  parameters: Readonly<Record<string, string>> = {},
  options: ProcessOptions = {},
): KubeObject[] {
  return instantiateTemplate(template, parameters, options).objects;
}

// oc process: app.ParseEnvironment accepts only names that are valid environment
// variable names (validation.IsEnvVarName), even with --ignore-unknown-parameters.
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

// templateprocessing/template.go: stringParameterExp and nonStringParameterExp.
const STRING_REFERENCE = /\$\{([a-zA-Z0-9_]+?)\}/g;
const NON_STRING_REFERENCE = /^\$\{\{([a-zA-Z0-9_]+)\}\}$/;
const STRING_REFERENCE_TEST = /\$\{([a-zA-Z0-9_]+?)\}/;

/** processTemplate with the template's substituted message and the final parameter values. */
export function instantiateTemplate(
  input: unknown,
  given: Readonly<Record<string, string>> = {},
  options: ProcessOptions = {},
): ProcessedTemplate {
  const label = templateLabel(input, options.source);
  const fail = (problems: readonly string[]): never => {
    throw new QontractError(`template ${label}: ${problems.join('; ')}`);
  };
  const parsed = templateSchema.safeParse(input);
  if (!parsed.success) {
    fail(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  const template = parsed.data as z.output<typeof templateSchema>;
  const params = (template.parameters ?? []).map((p) => ({
    name: p.name,
    value: p.value ?? '',
    generate: p.generate ?? '',
    from: p.from ?? '',
    required: p.required === true,
  }));

  // process.go RunProcess + injectUserVars: names are checked first; a given value
  // (even '') replaces the parameter's value and switches its generator off.
  const badNames = Object.keys(given).filter((name) => !ENV_VAR_NAME.test(name));
  if (badNames.length) fail(badNames.map((n) => `invalid parameter name ${JSON.stringify(n)}`));
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(given)) {
    if (typeof value !== 'string') fail([`the value of parameter ${name} is not a string`]);
    const param = params.find((p) => p.name === name);
    if (param) {
      param.value = value;
      param.generate = '';
    } else unknown.push(name);
  }
  if (unknown.length && !options.ignoreUnknownParameters) {
    fail(unknown.map((n) => `unknown parameter name ${JSON.stringify(n)}`));
  }

  // template.go GenerateParameterValues: generate what has no value, then refuse
  // required parameters still empty; every parameter's problem is reported.
  const problems: string[] = [];
  for (const param of params) {
    if (param.value !== '') continue;
    if (param.generate !== '') {
      if (param.generate !== 'expression') {
        problems.push(`unknown generator name '${param.generate}' for parameter ${param.name}`);
        continue;
      }
      try {
        param.value = generateExpressionValue(param.from, options.random);
      } catch (e) {
        if (!(e instanceof ExpressionError)) throw e;
        problems.push(`parameter ${param.name}: ${e.message}`);
        continue;
      }
    }
    if (param.value === '' && param.required) {
      problems.push(`template parameter ${param.name} is required and must be specified`);
    }
  }
  if (problems.length) fail(problems);

  // A map, as template.go's paramMap: with a repeated name, the last one wins.
  const values = new Map(params.map((p) => [p.name, p.value]));
  const labels = template.labels == null ? undefined : substituteLabels(values, template.labels);
  const objects: KubeObject[] = [];
  (template.objects ?? []).forEach((item, index) => {
    if (!isPlainObject(item) || kindOf(item) === '') {
      // runtime.Decode(unstructured.UnstructuredJSONScheme, ...) refuses these.
      problems.push(`objects[${index}]: unable to handle object: Object 'Kind' is missing`);
      return;
    }
    const object = substituteObject(values, stripNamespace(item));
    // After substitution, in case a parameter names the kind (template.go says so).
    Object.assign(object, groupifiedApiVersion(object.apiVersion, object.kind));
    if (labels) addObjectLabels(object, labels);
    objects.push(object);
  });
  if (problems.length) fail(problems);
  return {
    objects,
    message: evaluate(values, template.message ?? '').value,
    parameters: Object.fromEntries(values),
  };
}

function templateLabel(input: unknown, source: string | undefined): string {
  if (source) return source;
  const name = isPlainObject(input) && isPlainObject(input.metadata) ? input.metadata.name : '';
  return typeof name === 'string' && name !== '' ? name : '(unnamed)';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The kind unstructured decoding sees: none when apiVersion has more than one `/`. */
function kindOf(object: Record<string, unknown>): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  if (apiVersion.split('/').length > 2) return '';
  return typeof object.kind === 'string' ? object.kind : '';
}

/**
 * template.go stripNamespace: a hard-coded `metadata.namespace` is dropped, one
 * that contains a `${PARAM}` reference stays (and is substituted); the object
 * is then created in the namespace the template is processed for.
 */
function stripNamespace(item: Record<string, unknown>): Record<string, unknown> {
  const metadata = item.metadata;
  if (isPlainObject(metadata)) {
    if (!('namespace' in metadata)) return item;
    const ns = metadata.namespace;
    if (typeof ns === 'string' && STRING_REFERENCE_TEST.test(ns)) return item;
    const { namespace: _dropped, ...rest } = metadata;
    // Unstructured.SetNamespace('') removes the field; a non-string one becomes ''.
    const stripped = typeof ns === 'string' && ns !== '' ? rest : { ...metadata, namespace: '' };
    return { ...item, metadata: stripped };
  }
  if (metadata !== undefined || !('namespace' in item)) return item;
  // An object without metadata: the same rule for a top-level `namespace`.
  const ns = item.namespace;
  return typeof ns === 'string' && STRING_REFERENCE_TEST.test(ns)
    ? item
    : { ...item, namespace: '' };
}

/**
 * template.go EvaluateParameterSubstitution. A string that is exactly
 * `${{NAME}}` of a declared parameter becomes that value, to be read as JSON
 * (asString false); otherwise every `${NAME}` of a declared parameter is
 * replaced and the result stays a string. References to undeclared names stay
 * as written. Replacement is Go's: each reference found in the original string
 * replaces the first occurrence of its text in the output so far.
 */
function evaluate(values: ReadonlyMap<string, string>, input: string) {
  const whole = NON_STRING_REFERENCE.exec(input)?.[1];
  if (whole !== undefined) {
    const value = values.get(whole);
    if (value !== undefined) return { value, asString: false };
  }
  let out = input;
  for (const [reference, name] of input.matchAll(STRING_REFERENCE)) {
    const value = values.get(name as string);
    if (value !== undefined) out = out.replace(reference, () => value);
  }
  return { value: out, asString: true };
}

/**
 * object.go visitUnsettableValues: a non-string result is decoded with
 * json.Unmarshal; what does not decode (a bare word, '') stays a string.
 */
function nonStringValue(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    // Go refuses numbers beyond float64 ("1e400"); JSON.parse would say Infinity.
    return typeof value === 'number' && !Number.isFinite(value) ? text : value;
  } catch {
    return text;
  }
}

function substituteValue(values: ReadonlyMap<string, string>, v: unknown): unknown {
  if (typeof v === 'string') {
    const { value, asString } = evaluate(values, v);
    return asString ? value : nonStringValue(value);
  }
  if (Array.isArray(v)) return v.map((x) => substituteValue(values, x));
  if (isPlainObject(v)) return substituteObject(values, v);
  return v;
}

/** object.go visitValue over a map: keys are substituted as well as values. */
function substituteObject(
  values: ReadonlyMap<string, string>,
  object: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(object)) {
    const evaluated = evaluate(values, key);
    // A `${{NAME}}` key that decodes to a non-string makes Go panic; it stays text here.
    const decoded = evaluated.asString ? evaluated.value : nonStringValue(evaluated.value);
    out[typeof decoded === 'string' ? decoded : evaluated.value] = substituteValue(values, v);
  }
  return out;
}

/** template.go Process: the template's labels, keys and values substituted, before any object. */
function substituteLabels(
  values: ReadonlyMap<string, string>,
  labels: Readonly<Record<string, string | null>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) {
    out[evaluate(values, k).value] = evaluate(values, v ?? '').value;
  }
  return out;
}

/**
 * template.go addObjectLabels: the labels go onto every object's
 * `metadata.labels`, overriding labels of the same key; nothing nested (pod
 * templates of Deployments etc.) is touched. OpenShift's one nested case, a
 * typed DeploymentConfig's `spec.template`, does not apply to `oc process
 * --local`, which decodes objects as unstructured. Existing labels that are
 * not all strings (or null) are dropped, as Unstructured.GetLabels drops them.
 */
function addObjectLabels(object: KubeObject, labels: Readonly<Record<string, string>>): void {
  const metadata = object.metadata === undefined ? {} : object.metadata;
  if (!isPlainObject(metadata)) return;
  const existing = isPlainObject(metadata.labels) ? Object.entries(metadata.labels) : [];
  const usable = existing.every(([, v]) => v === null || typeof v === 'string');
  const kept = usable ? Object.fromEntries(existing.map(([k, v]) => [k, v ?? ''])) : {};
  object.metadata = { ...metadata, labels: { ...kept, ...labels } };
}
