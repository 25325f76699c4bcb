import type { JobBuildState } from '@qontract/jenkins';
import { resolveSaasFiles } from '@qontract/saas';
import { rawNamespace, rawSaasFile, rawTarget } from '@qontract/saas/test-support';
import { describe, expect, it } from 'vitest';
import {
  type UpstreamJobsCurrentState,
  upstreamJobDecision,
  upstreamJobSpecs,
} from './upstream-jobs.ts';

const SHA = 'f00dfeed00000000000000000000000000000042';
const upstream = {
  instance: { name: 'ci-int', serverUrl: 'https://ci.int.example.com' },
  name: 'app-build-main',
};

function saasFile() {
  const [sf] = resolveSaasFiles(
    [
      rawSaasFile('app-saas', [
        rawTarget({
          namespace: rawNamespace('app-stage', { env: 'stage' }),
          upstream,
          ref: 'main',
        }),
        rawTarget({
          namespace: rawNamespace('app-prod', { env: 'production', cluster: 'c2' }),
          ref: 'main',
        }),
      ]),
    ],
    [],
  );
  if (!sf) throw new Error('no saas file');
  return sf;
}

/** A build as the Jenkins client gives it. */
function build(number: number, result: string | null, commit?: string): JobBuildState {
  return {
    number,
    _class: 'hudson.model.FreeStyleBuild',
    actions: commit
      ? [{ _class: 'hudson.plugins.git.util.BuildData', lastBuiltRevision: { SHA1: commit } }, {}]
      : [{}],
    result,
    ...(commit ? { commit_sha: commit } : {}),
  } as JobBuildState;
}

const current = (builds: JobBuildState[]): UpstreamJobsCurrentState =>
  new Map([['ci-int', new Map([['app-build-main', builds]])]]);

/** What a run decides for the one upstream target, its stored value given (JSON, as the store gives it back). */
function decide(builds: JobBuildState[], stored: unknown) {
  const [spec] = upstreamJobSpecs(saasFile(), current(builds), false);
  if (!spec) return 'no spec';
  const fromStore = stored === null ? null : JSON.parse(JSON.stringify(stored));
  return upstreamJobDecision(spec, fromStore);
}

describe('upstreamJobSpecs', () => {
  it('builds the original TriggerSpecUpstreamJob: state key, content, target ref and reason', () => {
    const newest = build(7, 'SUCCESS', SHA);
    const specs = upstreamJobSpecs(saasFile(), current([newest, build(6, 'FAILURE')]), true);
    expect(specs).toEqual([
      {
        saasFileName: 'app-saas',
        envName: 'stage',
        timeout: null,
        pipelinesProvider: { name: 'tekton', provider: 'tekton' },
        resourceTemplateName: 'rt',
        clusterName: 'c1',
        namespaceName: 'app-stage',
        instanceName: 'ci-int',
        jobName: 'app-build-main',
        stateKey: 'app-saas/rt/c1/app-stage/stage/ci-int/app-build-main',
        stateContent: newest,
        reason: `https://github.com/org/app/commit/${SHA} via https://ci.int.example.com/job/app-build-main/7`,
        targetRef: SHA,
      },
    ]);
    // Without a commit: the job link alone, and the target's ref.
    const [plain] = upstreamJobSpecs(saasFile(), current([build(3, 'SUCCESS')]), true);
    expect(plain?.reason).toBe('https://ci.int.example.com/job/app-build-main/3');
    expect(plain?.targetRef).toBe('main');
    expect(
      upstreamJobSpecs(saasFile(), current([build(3, 'SUCCESS')]), false)[0]?.reason,
    ).toBeNull();
  });

  it('has no spec for a job without builds, an unknown job or an unreachable instance', () => {
    expect(upstreamJobSpecs(saasFile(), current([]), false)).toEqual([]);
    expect(upstreamJobSpecs(saasFile(), new Map([['ci-int', new Map()]]), false)).toEqual([]);
    expect(upstreamJobSpecs(saasFile(), new Map(), false)).toEqual([]);
  });
});

describe('upstreamJobDecision', () => {
  it('triggers on a new successful build', () => {
    expect(decide([build(8, 'SUCCESS', SHA)], build(7, 'SUCCESS'))).toBe('trigger');
    // After a cleared history the number is lower: still another build.
    expect(decide([build(1, 'SUCCESS')], build(7, 'SUCCESS'))).toBe('trigger');
  });

  it('waits for a running build and does nothing for a failed or aborted one', () => {
    expect(decide([build(8, null)], build(7, 'SUCCESS'))).toBe('skip');
    expect(decide([build(8, 'FAILURE')], build(7, 'SUCCESS'))).toBe('skip');
    expect(decide([build(8, 'ABORTED')], build(7, 'SUCCESS'))).toBe('skip');
    expect(decide([build(8, 'UNSTABLE')], build(7, 'SUCCESS'))).toBe('skip');
  });

  it('skips the stored build, and stores the first one it sees without triggering', () => {
    expect(decide([build(7, 'SUCCESS', SHA)], build(7, 'SUCCESS', SHA))).toBe('skip');
    expect(decide([build(7, 'SUCCESS')], null)).toBe('store');
    expect(decide([build(7, 'FAILURE')], null)).toBe('store');
    // A running build is not stored even the first time.
    expect(decide([build(7, null)], null)).toBe('skip');
  });

  it('compares the whole stored build: the same number with another content is not a trigger', () => {
    // Same number, result changed from what was stored (a rebuilt history): not a new build.
    expect(decide([build(7, 'SUCCESS')], build(7, 'FAILURE'))).toBe('skip');
  });
});
