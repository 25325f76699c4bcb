import { errorMessage, QontractError } from '@qontract/core';
import {
  dictGet,
  dictSet,
  isDict,
  type PyDict,
  type PyObject,
  type PyValue,
} from '@qontract/openshift';
import { parse as parseYaml } from 'yaml';
import { fields, type OpenshiftResourceData } from '../model.ts';
import { FetchResourceError, type TemplateType } from './context.ts';

/** A templated rule's type: `resource-template-jinja2` or `resource-template-extracurlyjinja2`. */
export function ruleTemplateType(kind: string, path: string): TemplateType {
  const m = /^resource-template-(jinja2|extracurlyjinja2)$/.exec(kind);
  if (!m) throw new QontractError(`unknown prometheus-rule type '${kind}' in ${path}`);
  return m[1] as TemplateType;
}

/** Every rule that already has annotations gets `html_url` pointing at its source file. */
export function addHtmlUrls(body: PyObject | PyDict, url: string): void {
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

/** The key of the alertmanager config to validate (`validate_alertmanager_config`), if any. */
export function alertmanagerKey(r: OpenshiftResourceData): string | undefined {
  const f = fields(r);
  return f.validate_alertmanager_config
    ? f.alertmanager_config_key || 'alertmanager.yaml'
    : undefined;
}

/** The config under `key`: `data` (base64 in a Secret), or a Secret's `stringData`. */
export function checkAlertmanagerKey(body: PyObject | PyDict, key: string, path: string): void {
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
export function validateAlertmanagerConfig(text: string, path: string): void {
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

/**
 * The `yaml` library's message without the source excerpt it appends (and
 * without source text it quotes after a colon): an alertmanager config from
 * Vault is a secret.
 */
function yamlProblem(message: string): string {
  const first = message.split('\n', 1)[0]!.replace(/:$/, '');
  return first.replace(/^([^:]*): .*( at line \d+, column \d+)$/, '$1$2');
}
