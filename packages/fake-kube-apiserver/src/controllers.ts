import { createHash } from 'node:crypto';
import { resourceKey } from './catalogue.ts';
import type { FakeCluster } from './cluster.ts';
import { clone, isObject, type JsonObject, metadataOf, stringMap } from './json.ts';

/**
 * What a few controllers do that our integrations read back.
 *
 * The part of the Deployment controller our recovery paths read: one
 * ReplicaSet per pod template, named `<deployment>-<pod-template-hash>`,
 * owned by the Deployment, the older ones scaled to zero, and the
 * `deployment.kubernetes.io/revision` annotation on both.
 */

const REVISION = 'deployment.kubernetes.io/revision';
// The alphabet the real controller encodes its hash with (no vowels, no look-alikes).
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

function podTemplateHash(template: unknown): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest();
  let out = '';
  for (let i = 0; i < 10; i++) out += SAFE[(digest[i] ?? 0) % SAFE.length];
  return out;
}

function ownedBy(object: JsonObject, uid: unknown): boolean {
  const refs = metadataOf(object).ownerReferences;
  return (
    Array.isArray(refs) && refs.some((r) => isObject(r) && r.uid === uid && r.controller === true)
  );
}

/** Creates or scales the ReplicaSets of a Deployment; returns its revision. */
export function syncReplicaSets(cluster: FakeCluster, deployment: JsonObject): string {
  const rsType = cluster.findType('apps', 'v1', 'replicasets');
  const metadata = metadataOf(deployment);
  const namespace = String(metadata.namespace ?? '');
  const spec = isObject(deployment.spec) ? deployment.spec : {};
  if (!rsType) return '1';
  const template = isObject(spec.template) ? spec.template : {};
  const hash = podTemplateHash(template);
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const owned = cluster.store
    .all(resourceKey(rsType), { namespace })
    .map((o) => JSON.parse(o.json) as JsonObject)
    .filter((rs) => ownedBy(rs, metadata.uid));
  const revisionOf = (rs: JsonObject) =>
    Number(stringMap(metadataOf(rs).annotations)[REVISION] ?? '0');
  const latest = Math.max(0, ...owned.map(revisionOf));
  const current = owned.find(
    (rs) => stringMap(metadataOf(rs).labels)['pod-template-hash'] === hash,
  );
  const options = { dryRun: false, fieldManager: 'kube-controller-manager' };
  for (const rs of owned) {
    if (rs === current) continue;
    const rsSpec = isObject(rs.spec) ? rs.spec : {};
    if (rsSpec.replicas !== 0) {
      cluster.patch(
        rsType,
        'v1',
        namespace,
        String(metadataOf(rs).name),
        'application/merge-patch+json',
        { spec: { replicas: 0 } },
        options,
      );
    }
  }
  if (current) {
    const revision = String(revisionOf(current) === latest ? latest : latest + 1);
    const currentSpec = isObject(current.spec) ? current.spec : {};
    if (currentSpec.replicas !== replicas || revisionOf(current) !== Number(revision)) {
      cluster.patch(
        rsType,
        'v1',
        namespace,
        String(metadataOf(current).name),
        'application/merge-patch+json',
        { metadata: { annotations: { [REVISION]: revision } }, spec: { replicas } },
        options,
      );
    }
    return revision;
  }
  const revision = String(latest + 1);
  const templateMeta = isObject(template.metadata) ? template.metadata : {};
  const labels = { ...stringMap(templateMeta.labels), 'pod-template-hash': hash };
  const selector = isObject(spec.selector) ? spec.selector : {};
  cluster.create(
    rsType,
    'v1',
    namespace,
    {
      metadata: {
        name: `${String(metadata.name)}-${hash}`,
        labels,
        annotations: {
          'deployment.kubernetes.io/desired-replicas': String(replicas),
          'deployment.kubernetes.io/max-replicas': String(replicas + 1),
          [REVISION]: revision,
        },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: metadata.name,
            uid: metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        replicas,
        selector: {
          ...clone(selector),
          matchLabels: { ...stringMap(selector.matchLabels), 'pod-template-hash': hash },
        },
        template: { ...clone(template), metadata: { ...clone(templateMeta), labels } },
      },
    },
    options,
  );
  return revision;
}

export const TOKEN_SECRET = 'kubernetes.io/service-account-token';

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The token controller: a `kubernetes.io/service-account-token` Secret gets
 * `token`, `ca.crt` and `namespace` data and the service account's uid, or is
 * deleted when its service account does not exist.
 */
export function fillServiceAccountToken(
  cluster: FakeCluster,
  namespace: string,
  name: string,
): void {
  const secrets = cluster.findType('', 'v1', 'secrets');
  const accounts = cluster.findType('', 'v1', 'serviceaccounts');
  if (!secrets || !accounts) return;
  const secret = cluster.store.read(resourceKey(secrets), namespace, name);
  if (!secret || secret.type !== TOKEN_SECRET) return;
  const annotations = stringMap(metadataOf(secret).annotations);
  const accountName = annotations['kubernetes.io/service-account.name'] ?? '';
  const account = cluster.store.read(resourceKey(accounts), namespace, accountName);
  const options = { dryRun: false, fieldManager: 'kube-controller-manager' };
  if (!account) {
    cluster.delete(secrets, namespace, name, { dryRun: false });
    return;
  }
  const uid = String(metadataOf(account).uid ?? '');
  const claims = {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': namespace,
    'kubernetes.io/serviceaccount/secret.name': name,
    'kubernetes.io/serviceaccount/service-account.name': accountName,
    'kubernetes.io/serviceaccount/service-account.uid': uid,
    sub: `system:serviceaccount:${namespace}:${accountName}`,
  };
  const signature = createHash('sha256')
    .update(`${cluster.name}/${uid}/${name}`)
    .digest('base64url');
  const token = `${base64url({ alg: 'RS256', kid: cluster.name })}.${base64url(claims)}.${signature}`;
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  cluster.patch(
    secrets,
    'v1',
    namespace,
    name,
    'application/merge-patch+json',
    {
      metadata: { annotations: { 'kubernetes.io/service-account.uid': uid } },
      data: { token: b64(token), 'ca.crt': b64(cluster.caCertificate), namespace: b64(namespace) },
    },
    options,
  );
}
