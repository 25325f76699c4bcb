/**
 * Throughput of the resource model's hot path on one core: canonicalise + sha256 of the desired
 * object, and the full three-way compare against an annotated current object (which hashes the
 * desired object again, normalises both sides and runs the jsonpatch diff).
 *
 *   node packages/openshift/bench/hash-compare.ts [objects]
 */

import { jsonPatchFromDiff } from '../src/resource/json-patch-diff.ts';
import { OpenshiftResource } from '../src/resource/openshift-resource.ts';
import { normalizeObject, resourcesEqual } from '../src/resource/three-way-diff.ts';

function deployment(i: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: `web-${i}`,
      labels: { app: 'web', team: 'sre', 'app.kubernetes.io/name': `web-${i}` },
      annotations: { note: 'managed', 'ignore-check.kube-linter.io/x': 'reason' },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: `quay.io/app/web:${i.toString(16).padStart(7, '0')}`,
              args: ['--port', '8080', '--verbose'],
              ports: [{ containerPort: 8080, name: 'http' }],
              env: [
                { name: 'LOG_LEVEL', value: 'info' },
                { name: 'EMPTY', value: '' },
                { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
              ],
              resources: {
                requests: { cpu: '100m', memory: '256Mi' },
                limits: { cpu: '1', memory: '1Gi' },
              },
              readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
            },
          ],
        },
      },
    },
  };
}

/** What the API server returns after an apply: annotations, server metadata, defaults, status. */
function currentFor(desired: OpenshiftResource): OpenshiftResource {
  // biome-ignore lint/suspicious/noExplicitAny: the fixture is navigated and extended freely
  const body = desired.annotate().body as any;
  Object.assign(body.metadata, {
    namespace: 'app-ns',
    uid: '6f1c2f4e-0000-4000-8000-000000000001',
    resourceVersion: '48213',
    generation: 2,
    creationTimestamp: '2024-05-01T10:11:13Z',
    managedFields: [
      {
        manager: 'kubectl',
        operation: 'Update',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': {} },
      },
    ],
  });
  body.spec.revisionHistoryLimit = 10;
  body.spec.strategy = {
    type: 'RollingUpdate',
    rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
  };
  body.spec.template.spec.restartPolicy = 'Always';
  body.spec.template.spec.containers[0].terminationMessagePath = '/dev/termination-log';
  body.status = {
    replicas: 3,
    readyReplicas: 3,
    conditions: [{ type: 'Available', status: 'True' }],
  };
  return new OpenshiftResource(body, desired.integration, desired.integrationVersion);
}

const count = Number(process.argv[2] ?? 20000);
const desired = Array.from(
  { length: count },
  (_, i) => new OpenshiftResource(deployment(i), 'openshift_resources', '1.9.3'),
);
const current = desired.map(currentFor);

function measure(label: string, fn: (i: number) => unknown): void {
  for (let i = 0; i < Math.min(2000, count); i++) fn(i); // warm-up
  // CPU time of this process, so that other load on the machine does not count.
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) fn(i);
  const used = process.cpuUsage(start);
  const seconds = (used.user + used.system) / 1e6;
  console.log(
    `${label.padEnd(48)} ${Math.round(count / seconds)
      .toLocaleString('en-US')
      .padStart(9)} objects/s`,
  );
}

measure('canonicalise + sha256 (desired)', (i) => desired[i]!.sha256sum());
measure('  normalise both sides', (i) => [
  normalizeObject(current[i]!),
  normalizeObject(desired[i]!),
]);
const normalized = desired.map(
  (d, i) => [normalizeObject(current[i]!), normalizeObject(d)] as const,
);
measure('  jsonpatch diff of the normalised bodies', (i) =>
  jsonPatchFromDiff(normalized[i]![0], normalized[i]![1]),
);
let unequal = 0;
measure('three-way compare (sha + normalise + jsonpatch)', (i) => {
  if (!resourcesEqual(current[i]!, desired[i]!)) unequal++;
});
if (unequal > 0) throw new Error(`expected every pair to be equal, ${unequal} were not`);
