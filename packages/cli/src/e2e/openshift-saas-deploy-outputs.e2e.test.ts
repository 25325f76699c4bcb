import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFile, planLines } from './harness.ts';
import { useSaasEnvironment } from './saas-environment.ts';

// What a deploy does besides applying: `compare: false`, the Slack notifications and
// the `--io-dir` files of a deploy triggered by an upstream job or an image.

const start = useSaasEnvironment();

const APP = ['--saas-file-name', 'saas-example-app'];
const STAGE = ['--env-name', 'example-stage'];
const SAAS_FILE = 'data/services/example-app/cicd/saas-example-app.yml';

describe('openshift-saas-deploy: compare: false', () => {
  it('re-applies every unchanged object in a wet run; a dry-run still compares', async () => {
    const e = await start();
    expect((await e.run([...APP, ...STAGE])).code).toBe(0);
    await editFile(join(e.env.appInterfaceDir, SAAS_FILE), (t) =>
      t.replace('managedResourceTypes:', 'compare: false\nmanagedResourceTypes:'),
    );
    const applies = () =>
      e.env.server.mutatingRequests({ cluster: 'appint-ex-01', verb: 'apply' }).length;

    const before = applies();
    const dry = await e.run([...APP, ...STAGE], { dryRun: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(planLines(dry).filter((l) => l.startsWith("['apply'"))).toEqual([]);
    expect(applies()).toBe(before);

    const wet = await e.run([...APP, ...STAGE]);
    expect(wet.code, wet.stderr).toBe(0);
    // The Deployment and the Service, both unchanged, are applied again.
    expect(planLines(wet).filter((l) => l.startsWith("['apply'"))).toEqual([
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Deployment', 'example-app']",
      "['apply', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'Service', 'example-app-metrics']",
    ]);
    expect(applies() - before).toBe(2);
  });
});
