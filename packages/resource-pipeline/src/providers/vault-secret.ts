import { errorMessage } from '@qontract/core';
import {
  base64EncodeSecretFieldValue,
  OpenshiftResource,
  type PyObject,
} from '@qontract/openshift';
import { fields, type OpenshiftResourceData } from '../model.ts';
import { FetchResourceError, type ProviderContext } from './context.ts';
import { alertmanagerKey, validateAlertmanagerConfig } from './prometheus-rule.ts';

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/** A Secret from a Vault secret: `_qb64` keys are already base64, the others are encoded. */
export async function vaultSecret(
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
