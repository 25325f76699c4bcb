import { createLogger, SecretRedactor, type SecretRef } from '@qontract/core';
import { type FakeJenkins, startFakeJenkins } from '@qontract/testing/fake-jenkins';
import { afterEach, describe, expect, it } from 'vitest';
import { JenkinsApi, JenkinsRequestError } from './client.ts';
import { JenkinsSettingsError, jenkinsMap } from './map.ts';

const SHA = 'c0ffee0000000000000000000000000000000001';

let jenkins: FakeJenkins | undefined;
afterEach(async () => {
  await jenkins?.close();
  jenkins = undefined;
});

function api(fake: FakeJenkins, password = fake.token, sleeps: number[] = []) {
  return new JenkinsApi(
    { url: `${fake.url}/`, user: fake.user, password },
    { sleep: async (ms) => void sleeps.push(ms) },
  );
}

describe('JenkinsApi.jobsState', () => {
  it('gives the newest build of each job as the original JobBuildState, commit_sha included', async () => {
    jenkins = await startFakeJenkins({
      jobs: {
        'app-build-main': [
          { result: 'FAILURE', commitSha: 'old' },
          { result: 'SUCCESS', commitSha: SHA },
        ],
        'app-running': [{ result: 'SUCCESS' }, { result: null }],
        'never-built': [],
      },
    });
    const state = await api(jenkins).jobsState();
    expect([...state.keys()]).toEqual(['app-build-main', 'app-running', 'never-built']);
    expect(state.get('app-build-main')).toEqual([
      {
        number: 2,
        _class: 'hudson.model.FreeStyleBuild',
        actions: [
          { _class: 'hudson.model.CauseAction' },
          {},
          { _class: 'hudson.plugins.git.util.BuildData', lastBuiltRevision: { SHA1: SHA } },
          { _class: 'hudson.plugins.git.GitTagAction' },
          {},
        ],
        result: 'SUCCESS',
        commit_sha: SHA,
      },
    ]);
    expect(state.get('app-running')).toEqual([
      {
        number: 2,
        _class: 'hudson.model.FreeStyleBuild',
        actions: [{ _class: 'hudson.model.CauseAction' }, {}, {}],
        result: null,
      },
    ]);
    expect(state.get('never-built')).toEqual([]);
    // One request, asking Jenkins for the newest build only.
    expect(jenkins.requestLog.map((r) => decodeURIComponent(r.query))).toEqual([
      '?tree=jobs[name,builds[number,result,actions[lastBuiltRevision[SHA1]]]{0,1}]',
    ]);
    expect(jenkins.writeCount()).toBe(0);
  });

  it('retries server trouble and gives up on a refusal at once, never naming the token', async () => {
    jenkins = await startFakeJenkins({ jobs: { app: [{ result: 'SUCCESS' }] } });
    jenkins.faults.add({ status: 503, times: 2 });
    const sleeps: number[] = [];
    expect((await api(jenkins, jenkins.token, sleeps).jobsState()).get('app')).toHaveLength(1);
    expect(sleeps).toEqual([1000, 2000]);

    jenkins.faults.add({ status: 502, times: 3 });
    await expect(api(jenkins).jobsState()).rejects.toThrow(/HTTP 502 \(after 3 attempts\)/);

    const before = jenkins.requestLog.length;
    const refused = api(jenkins, 'wrong-token-value').jobsState();
    await expect(refused).rejects.toBeInstanceOf(JenkinsRequestError);
    await expect(refused).rejects.toMatchObject({ status: 401 });
    await expect(refused).rejects.not.toThrow(/wrong-token-value/);
    expect(jenkins.requestLog.length - before).toBe(1);

    jenkins.faults.add({ status: 200, body: { jobs: [{ name: 7 }] }, times: 1 });
    await expect(api(jenkins).jobsState()).rejects.toThrow(
      /^GET \/api\/json\?tree=jobs\[.*: unexpected answer \(jobs\.0\.name: /,
    );
  });

  it('says so when the instance cannot be reached', async () => {
    jenkins = await startFakeJenkins();
    const { url } = jenkins;
    await jenkins.close();
    jenkins = undefined;
    const dead = new JenkinsApi(
      { url, user: 'u', password: 'p' },
      { sleep: async () => {}, attempts: 2 },
    );
    await expect(dead.jobsState()).rejects.toThrow(/no answer: ECONNREFUSED \(after 2 attempts\)/);
  });
});

describe('jenkinsMap', () => {
  function harness(secrets: Record<string, string>) {
    const redactor = new SecretRedactor();
    const lines: string[] = [];
    const ctx = {
      secrets: {
        read: async (ref: SecretRef) => secrets[ref.path] ?? '',
        readAll: async () => ({}),
      },
      signal: new AbortController().signal,
      redactor,
      log: createLogger({
        level: 'DEBUG',
        format: 'json',
        dryRun: false,
        redactor,
        destination: { write: (line: string) => void lines.push(line) },
      }),
    };
    return { ctx, lines };
  }
  const ref = (name: string, path: string) => ({ name, token: { path, field: 'all' } });

  it('reads each instance from its TOML token secret, the first of a name winning', async () => {
    jenkins = await startFakeJenkins({ jobs: { app: [{ result: 'SUCCESS' }] } });
    const toml = `[jenkins]\nurl = "${jenkins.url}"\nuser = "${jenkins.user}"\npassword = "${jenkins.token}"\n`;
    const { ctx, lines } = harness({ 'jenkins/ci': toml, 'jenkins/other': 'not = toml = at all' });
    const map = await jenkinsMap(ctx, [ref('ci', 'jenkins/ci'), ref('ci', 'jenkins/other')]);
    expect([...map.keys()]).toEqual(['ci']);
    expect((await map.get('ci')?.jobsState())?.get('app')?.[0]?.result).toBe('SUCCESS');
    // The token, alone or as the Basic header, never reaches a log line.
    const header = Buffer.from(`${jenkins.user}:${jenkins.token}`).toString('base64');
    ctx.log.info(`token ${jenkins.token} header ${header}`);
    expect(lines.join('\n')).not.toContain(jenkins.token);
    expect(lines.join('\n')).not.toContain(header);
  });

  it('names the instance and secret, not its content, when the secret is not the TOML expected', async () => {
    const { ctx } = harness({
      'jenkins/bad': 'password = "s3cr3t-value" [',
      'jenkins/partial': '[jenkins]\nurl = "https://ci.example.com"\npassword = "s3cr3t-value"\n',
    });
    const bad = jenkinsMap(ctx, [ref('ci-bad', 'jenkins/bad')]);
    await expect(bad).rejects.toBeInstanceOf(JenkinsSettingsError);
    await expect(bad).rejects.toThrow(
      'jenkins instance ci-bad: token secret jenkins/bad (field all) is not valid TOML',
    );
    await expect(bad).rejects.not.toThrow(/s3cr3t/);
    await expect(jenkinsMap(ctx, [ref('ci-partial', 'jenkins/partial')])).rejects.toThrow(
      /jenkins instance ci-partial: .* needs a \[jenkins\] table with url, user and password \(missing or not a string: jenkins.user\)/,
    );
  });
});
