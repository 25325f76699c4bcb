import { X509Certificate } from 'node:crypto';
import { errorMessage } from '@qontract/core';
import { isDict, type OpenshiftResource, type PyObject } from '@qontract/openshift';
import { fields, type OpenshiftResourceData } from '../model.ts';
import { FetchResourceError, type ProviderContext } from './context.ts';
import { fromContent, requiredFile } from './resource.ts';

const TLS_KEYS = [
  'termination',
  'insecureEdgeTerminationPolicy',
  'certificate',
  'key',
  'caCertificate',
  'destinationCACertificate',
];

/** A Route file, with TLS material from Vault when given; the certificate must match the host. */
export async function route(
  r: OpenshiftResourceData,
  pc: ProviderContext,
): Promise<OpenshiftResource> {
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
