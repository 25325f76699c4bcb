import { X509Certificate } from 'node:crypto';
import { errorMessage, QontractError, type SecretReader } from '@qontract/core';
import {
  base64EncodeSecretFieldValue,
  dictGet,
  dictSet,
  isDict,
  OpenshiftResource,
  type PyDict,
  type PyObject,
  type PyValue,
  parseResource,
  ResourceDataError,
  YamlError,
} from '@qontract/openshift';
import type { LoadedResource, LoadedTexts } from '@qontract/openshift/parse-pool';
import { parseTemplateVariables } from '@qontract/templating';
import { parse as parseYaml } from 'yaml';
import {
  type BuiltObject,
  cacheKey,
  type DesiredCacheRun,
  type HelperCall,
} from './desired-cache.ts';
import {
  describeResource,
  fields,
  type OpenshiftResourceData,
  type SelectedNamespace,
} from './model.ts';

/** A resource could not be built; registered as an error for its namespace, the others go on. */
export class FetchResourceError extends QontractError {}

type TemplateType = 'jinja2' | 'extracurlyjinja2';

/** Renders a template body (a resource-template or templated prometheus-rule). */
export interface TemplateRenderer {
  (
    body: string,
    options: {
      type: TemplateType;
      path: string;
      variables: Record<string, unknown>;
      /** Told every lookup the render makes, and whether it reads the clock (the desired cache). */
      record?: { call(call: HelperCall): void; clock(): void };
    },
  ): Promise<string>;
  /** Makes a recorded lookup again; without it templates are rendered on every run. */
  readonly replay?: (call: HelperCall) => Promise<string>;
}

export interface ProviderContext {
  /** The `qontract.integration` value and version of the pipeline. */
  readonly integration: string;
  readonly integrationVersion: string;
  readonly secrets: SecretReader;
  readonly render: TemplateRenderer;
  /** app-interface settings `repoUrl`, for PrometheusRule `html_url`. */
  readonly repoUrl: string;
  /** What earlier runs of this process built (loop mode); none: everything is built. */
  readonly cache?: DesiredCacheRun | undefined;
  /** The bundle of this run (pinned GraphQL endpoint), if known. */
  readonly bundleSha?: string | undefined;
  /** Resource files being loaded on worker threads (large runs); the others are loaded here. */
  readonly loaded?: LoadedTexts | undefined;
}

export const DEFAULT_REPO_URL = 'https://gitlab.cee.redhat.com/service/app-interface';

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
      const rendered = await render(sel, r, file, type, pc);
      return fromContent(rendered, file.path, pc, {
        alertmanagerKey: alertmanagerKey(r),
        rendered: true,
      });
    }
    case 'prometheus-rule': {
      const file = requiredFile(r);
      const kind = f.type ?? 'resource';
      const m = /^resource-template-(jinja2|extracurlyjinja2)$/.exec(kind);
      if (!m) throw new QontractError(`unknown prometheus-rule type '${kind}' in ${file.path}`);
      const rendered = await render(sel, r, file, m[1] as TemplateType, pc);
      return fromContent(rendered, file.path, pc, { rendered: true });
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

/** A resource file used as it is, and how it is read; undefined for the other providers. */
function plainFile(
  r: OpenshiftResourceData,
): { file: { path: string; content: string }; options: ContentOptions } | undefined {
  const f = fields(r);
  if (f.provider === 'resource') {
    return {
      file: requiredFile(r),
      options: { validateJson: Boolean(f.validate_json), alertmanagerKey: alertmanagerKey(r) },
    };
  }
  if (f.provider === 'prometheus-rule' && (f.type ?? 'resource') === 'resource') {
    return { file: requiredFile(r), options: {} };
  }
  return undefined;
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

function requiredFile(r: OpenshiftResourceData): { path: string; content: string } {
  const file = fields(r).path;
  if (!file) throw new FetchResourceError(`${fields(r).provider} without a resource path`);
  return file;
}

function templateType(type: string, path: string): TemplateType {
  if (type === 'jinja2' || type === 'extracurlyjinja2') return type;
  throw new QontractError(`unknown template type '${type}' in ${path}`);
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

/**
 * Parses a (rendered) resource file and builds its object, as the `resource` provider does.
 * `rendered`: the content is a template's output, which may hold secrets.
 */
function fromContent(
  content: string,
  path: string,
  pc: ProviderContext,
  options: ContentOptions,
  /** The caller changes the body afterwards: it gets its own copy. */
  mutable = false,
): OpenshiftResource {
  if (!pc.cache) return buildFromContent(content, path, pc, options).resource;
  const variant = `${variantPrefix([
    pc.integration,
    pc.integrationVersion,
    pc.repoUrl,
    options.validateJson ?? false,
    options.alertmanagerKey ?? null,
    options.rendered ?? false,
  ])}${path}`;
  return pc.cache.object(content, variant, () => buildFromContent(content, path, pc, options), {
    mutable,
  });
}

/**
 * A short stand-in for the inputs of a build other than the content and the
 * path: a handful of combinations per process, while the cache keeps one key
 * per object (50,000 keys of the whole list were 7 MiB).
 */
const variantPrefixes = new Map<string, string>();

function variantPrefix(parts: readonly unknown[]): string {
  const full = JSON.stringify(parts);
  let prefix = variantPrefixes.get(full);
  if (prefix === undefined) {
    prefix = `${variantPrefixes.size}\u0000`;
    variantPrefixes.set(full, prefix);
  }
  return prefix;
}

interface ContentOptions {
  validateJson?: boolean;
  alertmanagerKey?: string | undefined;
  rendered?: boolean;
  /** The content as a worker loaded it (`parseResource`'s body, decoded on a miss, and its sha). */
  loaded?: LoadedResource | undefined;
}

function buildFromContent(
  content: string,
  path: string,
  pc: ProviderContext,
  options: ContentOptions,
): BuiltObject {
  // parseResource refuses anything but a mapping and drops a top-level `$schema`.
  let body: PyObject | PyDict;
  try {
    body = options.loaded ? options.loaded.body() : parseResource(content, 'yaml');
  } catch (e) {
    throw new FetchResourceError(
      `Could not parse data. Skipping resource: ${path}: ${parseFailure(e, options.rendered === true)}`,
    );
  }
  if (options.validateJson) {
    const data = dictGet(body, 'data');
    if (isDict(data)) {
      for (const key of Object.keys(data)) {
        const value = dictGet(data, key);
        try {
          JSON.parse(String(value));
        } catch {
          throw new FetchResourceError(`invalid json in ${path} under ${key}`);
        }
      }
    }
  }
  if (options.alertmanagerKey) checkAlertmanagerKey(body, options.alertmanagerKey, path);
  // The worker's sha is that of the body as loaded: not of one changed here.
  let sha256sum = options.loaded?.sha256sum;
  if (dictGet(body, 'kind') === 'PrometheusRule') {
    addHtmlUrls(body, `${pc.repoUrl}/blob/master/resources${path}`);
    sha256sum = undefined;
  }
  try {
    const resource = new OpenshiftResource(body, pc.integration, pc.integrationVersion, {
      errorDetails: path,
    });
    return { resource, sha256sum };
  } catch (e) {
    throw new FetchResourceError(errorMessage(e));
  }
}

/**
 * Why a resource file did not parse. The original says only "Could not parse
 * data"; the reason and the line (YamlError carries them) tell the author what
 * to fix. Rendered text may hold secrets from the template's lookups, so its
 * quoted fragments (alias, tag or scalar text) are left out.
 */
function parseFailure(e: unknown, rendered: boolean): string {
  if (e instanceof ResourceDataError) return e.message.slice(e.pythonError.length + 2);
  if (!(e instanceof YamlError)) return errorMessage(e);
  if (!rendered) return `invalid YAML: ${e.message}`;
  return `invalid YAML in the rendered template: ${withoutQuotedText(e.message)}`;
}

/** Masks quoted fragments of a message, except token names (`'<stream-end>'`) and single characters. */
function withoutQuotedText(message: string): string {
  return message.replace(/(["'])((?:\\.|(?!\1).)*)\1/g, (whole, quote: string, inner: string) =>
    inner.length <= 1 || /^<[-a-z]+>$/.test(inner) ? whole : `${quote}…${quote}`,
  );
}

/**
 * The `yaml` library's message without the source excerpt it appends (and
 * without source text it quotes after a colon): an alertmanager config from
 * Vault is a secret.
 */
function yamlProblem(message: string): string {
  const first = message.split('\n', 1)[0]!.replace(/:$/, '');
  return first.replace(/^([^:]*): .*( at line \d+, column \d+)$/, '$1$2');
}

/** Every rule that already has annotations gets `html_url` pointing at its source file. */
function addHtmlUrls(body: PyObject | PyDict, url: string): void {
  const spec = dictGet(body, 'spec');
  const groups = isDict(spec) ? dictGet(spec, 'groups') : undefined;
  if (!Array.isArray(groups)) return;
  for (const group of groups) {
    const rules = isDict(group) ? dictGet(group, 'rules') : undefined;
    if (!Array.isArray(rules)) continue;
    for (const rule of rules) {
      const annotations = isDict(rule) ? dictGet(rule, 'annotations') : undefined;
      if (isDict(annotations) && Object.keys(annotations).length > 0)
        dictSet(annotations, 'html_url', url);
    }
  }
}

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/** A Secret from a Vault secret: `_qb64` keys are already base64, the others are encoded. */
async function vaultSecret(
  r: OpenshiftResourceData,
  pc: ProviderContext,
): Promise<OpenshiftResource> {
  const f = fields(r);
  const path = f.vault_path ?? '';
  let values: Record<string, string>;
  try {
    values = await pc.secrets.readAll({ path, version: f.version });
  } catch (e) {
    throw new FetchResourceError(
      `error fetching secret ${path} (version ${f.version ?? 'latest'}): ${errorMessage(e)}`,
    );
  }
  const amKey = alertmanagerKey(r);
  if (amKey) {
    const config = values[amKey];
    if (config === undefined)
      throw new FetchResourceError(`${path}: alertmanager config key '${amKey}' not found`);
    validateAlertmanagerConfig(config, path);
  }
  const data: PyObject = {};
  for (const [key, value] of Object.entries(values)) {
    if (key === 'external-resources/updated_at') continue;
    if (!SECRET_KEY.test(key)) {
      throw new FetchResourceError(
        `secret ${path}: invalid key '${key}' (allowed: ${SECRET_KEY.source})`,
      );
    }
    if (key.toLowerCase().endsWith('_qb64')) data[key.slice(0, -5)] = value.replaceAll('\n', '');
    else data[key] = base64EncodeSecretFieldValue(value);
  }
  const metadata: PyObject = {
    name: f.name || (path.split('/').pop() ?? path),
    annotations: parseJsonMap(f.annotations, `annotations of ${path}`) ?? {},
  };
  const labels = parseJsonMap(f.labels, `labels of ${path}`);
  if (labels) metadata.labels = labels;
  const body: PyObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: f.vault_type || 'Opaque',
    metadata,
    data,
  };
  try {
    return new OpenshiftResource(body, pc.integration, pc.integrationVersion, {
      errorDetails: path,
    });
  } catch (e) {
    throw new FetchResourceError(errorMessage(e));
  }
}

function parseJsonMap(text: string | null | undefined, what: string): PyObject | undefined {
  if (!text) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as PyObject) : undefined;
  } catch {
    throw new FetchResourceError(`invalid JSON in ${what}`);
  }
}

const TLS_KEYS = [
  'termination',
  'insecureEdgeTerminationPolicy',
  'certificate',
  'key',
  'caCertificate',
  'destinationCACertificate',
];

/** A Route file, with TLS material from Vault when given; the certificate must match the host. */
async function route(r: OpenshiftResourceData, pc: ProviderContext): Promise<OpenshiftResource> {
  const f = fields(r);
  const file = requiredFile(r);
  // The TLS material below changes the body: it needs its own copy.
  const resource = fromContent(file.content, file.path, pc, {}, true);
  if (!f.vault_tls_secret_path || f.vault_tls_secret_version == null) return resource;
  let tls: Record<string, string>;
  try {
    tls = await pc.secrets.readAll({
      path: f.vault_tls_secret_path,
      version: f.vault_tls_secret_version,
    });
  } catch (e) {
    throw new FetchResourceError(
      `error fetching route TLS secret ${f.vault_tls_secret_path}: ${errorMessage(e)}`,
    );
  }
  const body = resource.body as PyObject;
  const spec: PyObject = isDict(body.spec) ? (body.spec as PyObject) : {};
  body.spec = spec;
  const target: PyObject = isDict(spec.tls) ? (spec.tls as PyObject) : {};
  for (const key of TLS_KEYS) if (tls[key] !== undefined) target[key] = tls[key];
  spec.tls = target;
  const host = typeof spec.host === 'string' ? spec.host : undefined;
  if (host && tls.certificate) {
    let cn: string | undefined;
    try {
      cn = /CN=([^\n,]+)/.exec(new X509Certificate(tls.certificate).subject)?.[1];
    } catch {
      throw new FetchResourceError(
        `route ${file.path}: the certificate in ${f.vault_tls_secret_path} cannot be read`,
      );
    }
    if (!cn || !hostMatches(cn, host)) {
      throw new FetchResourceError(
        `route ${file.path}: certificate CN ${cn ?? '(none)'} does not match host ${host}`,
      );
    }
  }
  return resource;
}

/** `*.d` matches any deeper subdomain of `d` but not `d` itself. */
export function hostMatches(cn: string, host: string): boolean {
  if (cn.startsWith('*.')) return host.endsWith(cn.slice(1)) && host.length > cn.length - 1;
  return cn === host;
}

function alertmanagerKey(r: OpenshiftResourceData): string | undefined {
  const f = fields(r);
  return f.validate_alertmanager_config
    ? f.alertmanager_config_key || 'alertmanager.yaml'
    : undefined;
}

/** The config under `key`: `data` (base64 in a Secret), or a Secret's `stringData`. */
function checkAlertmanagerKey(body: PyObject | PyDict, key: string, path: string): void {
  const isSecret = dictGet(body, 'kind') === 'Secret';
  const data = dictGet(body, 'data');
  const stringData = dictGet(body, 'stringData');
  let config: PyValue | undefined = isDict(data) ? dictGet(data, key) : undefined;
  if (config !== undefined && isSecret)
    config = Buffer.from(String(config), 'base64').toString('utf8');
  if (config === undefined && isSecret && isDict(stringData)) config = dictGet(stringData, key);
  if (config === undefined)
    throw new FetchResourceError(`${path}: alertmanager config key '${key}' not found`);
  validateAlertmanagerConfig(String(config), path);
}

/**
 * `validate_alertmanager_config`: upstream runs `amtool check-config`, which
 * this tool does not ship; the config is checked for what amtool rejects
 * first: YAML that is a mapping with a `route` and a `receivers` list, and
 * every receiver a route names defined.
 */
function validateAlertmanagerConfig(text: string, path: string): void {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new FetchResourceError(
      `${path}: alertmanager config is not valid YAML: ${yamlProblem(errorMessage(e))}`,
    );
  }
  type Route = { receiver?: string; routes?: Route[] };
  const config = doc as { route?: Route; receivers?: Array<{ name?: string }> } | null;
  if (!config || typeof config !== 'object' || Array.isArray(config)) {
    throw new FetchResourceError(`${path}: alertmanager config is not a mapping`);
  }
  if (!config.route || typeof config.route !== 'object') {
    throw new FetchResourceError(`${path}: alertmanager config has no route`);
  }
  if (!Array.isArray(config.receivers))
    throw new FetchResourceError(`${path}: alertmanager config has no receivers`);
  const names = new Set(config.receivers.map((r) => r?.name));
  const missing: string[] = [];
  const walk = (route: Route) => {
    if (route.receiver && !names.has(route.receiver)) missing.push(route.receiver);
    for (const child of route.routes ?? []) walk(child);
  };
  walk(config.route);
  if (missing.length) {
    throw new FetchResourceError(
      `${path}: alertmanager config routes to undefined receiver(s): ${missing.join(', ')}`,
    );
  }
}
