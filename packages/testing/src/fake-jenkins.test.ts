import { afterEach, describe, expect, it } from 'vitest';
import { type FakeJenkins, startFakeJenkins } from './fake-jenkins.ts';

let jenkins: FakeJenkins | undefined;
afterEach(async () => {
  await jenkins?.close();
  jenkins = undefined;
});

const SHA = '0123456789abcdef0123456789abcdef01234567';

async function get(fake: FakeJenkins, path: string, auth = `${fake.user}:${fake.token}`) {
  const res = await fetch(`${fake.url}${path}`, {
    headers: auth ? { Authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {},
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

describe('fake Jenkins', () => {
  it('answers the trigger query with Jenkins shapes: _class, {} actions, lastBuiltRevision', async () => {
    jenkins = await startFakeJenkins({
      jobs: {
        'app-build': [
          { result: 'SUCCESS', commitSha: SHA, timestamp: 1_700_000_000_000 },
          { result: null },
        ],
        'no-builds': [],
      },
    });
    const tree = 'jobs[name,builds[number,result,actions[lastBuiltRevision[SHA1]]]]';
    const res = await get(jenkins, `/api/json?tree=${encodeURIComponent(tree)}`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      _class: 'hudson.model.Hudson',
      jobs: [
        {
          _class: 'hudson.model.FreeStyleProject',
          name: 'app-build',
          builds: [
            // Newest first; a running build has result null.
            {
              _class: 'hudson.model.FreeStyleBuild',
              number: 2,
              result: null,
              actions: [{ _class: 'hudson.model.CauseAction' }, {}, {}],
            },
            {
              _class: 'hudson.model.FreeStyleBuild',
              number: 1,
              result: 'SUCCESS',
              actions: [
                { _class: 'hudson.model.CauseAction' },
                {},
                { _class: 'hudson.plugins.git.util.BuildData', lastBuiltRevision: { SHA1: SHA } },
                { _class: 'hudson.plugins.git.GitTagAction' },
                {},
              ],
            },
          ],
        },
        { _class: 'hudson.model.FreeStyleProject', name: 'no-builds', builds: [] },
      ],
    });
  });

  it('takes range selectors, caps builds at the newest 100 and hides allBuilds unless asked', async () => {
    jenkins = await startFakeJenkins();
    for (let n = 0; n < 105; n++) jenkins.addBuild('big', { result: 'FAILURE' });
    const numbers = async (tree: string) => {
      const body = (await get(jenkins as FakeJenkins, `/job/big/api/json?tree=${tree}`)).json();
      const list = (body.builds ?? body.allBuilds) as Array<{ number: number }>;
      return list.map((b) => b.number);
    };
    expect(await numbers('builds[number]{0,2}')).toEqual([105, 104]);
    expect(await numbers('builds[number]{3}')).toEqual([102]);
    expect(await numbers('builds[number]{,1}')).toEqual([105]);
    expect(await numbers('builds[number]{98,}')).toEqual([7, 6]);
    expect((await numbers('builds[number]')).length).toBe(100);
    expect((await numbers('allBuilds[number]')).length).toBe(105);
    const plain = (await get(jenkins, '/job/big/api/json')).json();
    expect(plain).not.toHaveProperty('allBuilds');
    expect((plain.builds as unknown[])[0]).toEqual({
      _class: 'hudson.model.FreeStyleBuild',
      number: 105,
      url: `${jenkins.url}/job/big/105/`,
    });
    // A range inside a list of jobs applies to each job's builds.
    jenkins.addBuild('small', { result: 'SUCCESS' });
    jenkins.addBuild('small', { result: 'SUCCESS' });
    const root = (await get(jenkins, '/api/json?tree=jobs[name,builds[number]{0,1}]')).json();
    expect(root.jobs).toEqual([
      {
        _class: 'hudson.model.FreeStyleProject',
        name: 'big',
        builds: [{ _class: 'hudson.model.FreeStyleBuild', number: 105 }],
      },
      {
        _class: 'hudson.model.FreeStyleProject',
        name: 'small',
        builds: [{ _class: 'hudson.model.FreeStyleBuild', number: 2 }],
      },
    ]);
  });

  it('serves builds and permalinks, and 404s for unknown jobs and builds', async () => {
    jenkins = await startFakeJenkins({ jobs: { app: [{ result: 'SUCCESS', timestamp: 42 }] } });
    jenkins.addBuild('app');
    const last = (
      await get(jenkins, '/job/app/lastBuild/api/json?tree=number,building,result')
    ).json();
    expect(last).toEqual({
      _class: 'hudson.model.FreeStyleBuild',
      building: true,
      number: 2,
      result: null,
    });
    jenkins.setResult('app', 2, 'ABORTED');
    expect((await get(jenkins, '/job/app/2/api/json?tree=result')).json()).toEqual({
      _class: 'hudson.model.FreeStyleBuild',
      result: 'ABORTED',
    });
    expect(
      (await get(jenkins, '/job/app/lastSuccessfulBuild/api/json?tree=number,timestamp')).json(),
    ).toEqual({ _class: 'hudson.model.FreeStyleBuild', number: 1, timestamp: 42 });
    expect((await get(jenkins, '/job/app/api/json?tree=lastBuild')).json()).toEqual({
      _class: 'hudson.model.FreeStyleProject',
      lastBuild: { _class: 'hudson.model.FreeStyleBuild' },
    });
    expect((await get(jenkins, '/job/nope/api/json')).status).toBe(404);
    expect((await get(jenkins, '/job/app/9/api/json')).status).toBe(404);
    expect((await get(jenkins, '/api/json?tree=jobs[name')).status).toBe(400);
  });

  it('wants Basic auth with the user and API token', async () => {
    jenkins = await startFakeJenkins({ jobs: { app: [] } });
    const anonymous = await get(jenkins, '/api/json', '');
    expect(anonymous.status).toBe(403);
    const wrong = await get(jenkins, '/api/json', `${jenkins.user}:not-the-token`);
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain(`Invalid password/token for user: ${jenkins.user}`);
    expect(wrong.text).not.toContain('not-the-token');
    expect((await get(jenkins, '/api/json')).status).toBe(200);
  });

  it('counts writes: a POST build starts a running build', async () => {
    jenkins = await startFakeJenkins({ jobs: { app: [{ result: 'SUCCESS' }] } });
    await get(jenkins, '/api/json?tree=jobs[name]');
    expect(jenkins.writeCount()).toBe(0);
    const res = await fetch(`${jenkins.url}/job/app/build`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${jenkins.user}:${jenkins.token}`).toString('base64')}`,
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${jenkins.url}/queue/item/1/`);
    expect(jenkins.writeCount()).toBe(1);
    const last = (await get(jenkins, '/job/app/lastBuild/api/json?tree=number,result')).json();
    expect(last).toMatchObject({ number: 2, result: null });
    expect(jenkins.requestLog.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /api/json 200',
      'POST /job/app/build 201',
      'GET /job/app/lastBuild/api/json 200',
    ]);
  });
});
