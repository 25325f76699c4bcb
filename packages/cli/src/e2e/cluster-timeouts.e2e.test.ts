import { describe, expect, it } from 'vitest';
import { messages, runQontractReconcile, useExampleEnvironment } from './harness.ts';

const start = useExampleEnvironment();

const ours = {
  'qontract.integration': 'openshift_resources',
  'qontract.integration_version': '1.9.3',
  'qontract.sha256sum': 'left-over',
};

describe('a hung cluster does not hold the others', () => {
  it('gives the cluster up at the request time-out, reports it, reconciles the others and deletes nothing', async () => {
    const env = await start();
    const { server, configPath } = env;
    expect(
      (await runQontractReconcile(['--config', configPath, 'openshift-namespaces'])).code,
    ).toBe(0);
    // Ours but no longer desired: a healthy run would delete it.
    server.seed('appint-ex-01', [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'left-over', namespace: 'example-app-stage', annotations: ours },
      },
    ]);
    server.faults.set('appint-ex-02', { verb: 'list', hang: true });
    server.resetLog();

    const started = performance.now();
    const run = await runQontractReconcile(['--config', configPath, 'openshift-resources'], {
      CLUSTER_REQUEST_TIMEOUT_SECS: '1',
    });
    // The default request time-out alone is 60 s (it was 5 × 60 s); generous for a loaded machine.
    expect(performance.now() - started).toBeLessThan(30_000);

    expect(run.code).toBe(1);
    const errors = messages(run, 50);
    expect(errors).toContainEqual(
      expect.stringMatching(
        /^\[appint-ex-02\] GET \/api\S* timed out after 1s; the cluster is skipped for the rest of the run$/,
      ),
    );
    expect(errors).toContain("'delete' action is disabled due to previous errors (1 held back).");
    // The healthy clusters' objects were applied; nothing was written to the hung one.
    expect(
      server.get('appint-ex-01', 'v1', 'ConfigMap', 'example-app-stage', 'example-app-settings'),
    ).toBeDefined();
    expect(
      server.mutatingRequests({ cluster: 'appint-ex-01', verb: 'apply' }).length,
    ).toBeGreaterThan(0);
    expect(server.mutatingRequests({ cluster: 'appint-ex-02' })).toEqual([]);
    expect(server.mutatingRequests({ verb: 'delete' })).toEqual([]);
    expect(
      server.get('appint-ex-01', 'v1', 'ConfigMap', 'example-app-stage', 'left-over'),
    ).toBeDefined();
  });
});
