import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createEmbeddedEngine, loadEmbeddedEngine } from './engine.ts';
import { type BundleServer, startBundleServer } from './server.ts';
import { BASIC_FIXTURE } from './test-support/tree.ts';
import type { EmbeddedEngine } from './types.ts';

let engine: EmbeddedEngine;
let server: BundleServer;
beforeAll(async () => {
  engine = await loadEmbeddedEngine(BASIC_FIXTURE, { git: false });
  server = await startBundleServer(engine, { port: 0 });
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('startBundleServer', () => {
  it('binds 127.0.0.1 on a free port by default', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('serves the bundle sha as text and health', async () => {
    const sha = await fetch(`${server.url}/sha256`);
    expect(sha.status).toBe(200);
    expect(await sha.text()).toBe(engine.sha256);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('');
  });

  it('answers POST /graphql and /graphqlsha/<sha> with data and extensions.schemas', async () => {
    const query = '{ clusters_v1(name: "prod-1") { name labels } }';
    const expected = {
      data: {
        clusters_v1: [{ name: 'prod-1', labels: '{"2":"two","10":"ten","alpha":"a","zone":"b"}' }],
      },
      extensions: { schemas: ['/openshift/cluster-1.yml'] },
    };
    const latest = await post('/graphql', { query });
    expect(latest.status).toBe(200);
    expect(latest.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await latest.json()).toEqual(expected);
    const pinned = await post(`/graphqlsha/${engine.sha256}`, { query });
    expect(await pinned.json()).toEqual(expected);
  });

  it('passes variables and answers GET queries', async () => {
    const query = 'query($n: String) { clusters_v1(name: $n) { name } }';
    const r = await post('/graphql', { query, variables: { n: 'stage-1' } });
    expect(await r.json()).toMatchObject({ data: { clusters_v1: [{ name: 'stage-1' }] } });
    const params = new URLSearchParams({ query, variables: JSON.stringify({ n: 'prod-1' }) });
    const g = await fetch(`${server.url}/graphql?${params}`);
    expect(await g.json()).toMatchObject({ data: { clusters_v1: [{ name: 'prod-1' }] } });
  });

  it('returns 404 for an unknown sha', async () => {
    const r = await post(`/graphqlsha/${'0'.repeat(64)}`, { query: '{ clusters_v1 { name } }' });
    expect(r.status).toBe(404);
    const info = await fetch(`${server.url}/git-commit-info/${'0'.repeat(64)}`);
    expect(info.status).toBe(404);
  });

  it('returns 400 for parse and validation errors, 200 for execution errors', async () => {
    const parse = await post('/graphql', { query: '{ clusters_v1 { name }' });
    expect(parse.status).toBe(400);
    const body = (await parse.json()) as { errors: { message: string }[] };
    expect(body.errors[0]).toMatchObject({
      message: expect.stringMatching(/^Syntax Error/),
      extensions: { code: 'GRAPHQL_PARSE_FAILED' },
    });
    const invalid = await post('/graphql', { query: '{ clusters_v1 { nope } }' });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
    });
    const badVariables = await post('/graphql', {
      query: 'query($n: String!) { clusters_v1(name: $n) { name } }',
    });
    expect(badVariables.status).toBe(400);
    expect(await badVariables.json()).toMatchObject({
      errors: [{ extensions: { code: 'BAD_USER_INPUT' } }],
    });
    const exec = await post('/graphql', { query: '{ resources_v1(path: "/nope") { path } }' });
    expect(exec.status).toBe(200);
    expect(await exec.json()).toMatchObject({
      data: null,
      errors: [{ extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
      extensions: { schemas: [] },
    });
    const badFilter = await post('/graphql', {
      query: '{ clusters_v1(filter: { x: 1 }) { name } }',
    });
    expect(badFilter.status).toBe(200);
    expect(await badFilter.json()).toMatchObject({
      errors: [{ extensions: { code: 'BAD_FILTER_FIELD' } }],
    });
    const noQuery = await post('/graphql', {});
    expect(noQuery.status).toBe(400);
    const notJson = await post('/graphql', 'not json');
    expect(notJson.status).toBe(400);
  });

  it('rejects bodies over 100 kB like express.json()', async () => {
    const r = await post('/graphql', { query: `{ clusters_v1 { name } } #${'x'.repeat(110_000)}` });
    expect(r.status).toBe(413);
  });

  it('keeps a keep-alive connection usable after a 413, as express.json() does', async () => {
    // express.json() reads the rest of an oversize body before it answers 413, so
    // the connection stays in step and the client's next request on it succeeds.
    const connections: unknown[] = [];
    const count = (socket: unknown) => connections.push(socket);
    server.server.on('connection', count);
    const client = new Client(server.url, { pipelining: 1, keepAliveTimeout: 10_000 });
    onTestFinished(async () => {
      server.server.off('connection', count);
      await client.close();
    });
    const request = (body?: string) =>
      client.request({
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body ?? JSON.stringify({ query: '{ clusters_v1 { name } }' }),
      });

    const big = await request(JSON.stringify({ query: `{ x } #${'x'.repeat(1_000_000)}` }));
    expect(big.statusCode).toBe(413);
    expect(big.headers.connection).not.toBe('close');
    await big.body.text();
    for (let i = 0; i < 3; i++) {
      const next = await request();
      expect(next.statusCode).toBe(200);
      expect(await next.body.json()).toMatchObject({ data: { clusters_v1: expect.any(Array) } });
    }
    expect(connections).toHaveLength(1);
  });

  it('serves git commit info, {} when the bundle has none', async () => {
    const none = await fetch(`${server.url}/git-commit-info/${engine.sha256}`);
    expect(await none.json()).toEqual({});
    const withGit = createEmbeddedEngine(
      {
        data: {},
        resources: {},
        graphql: { confs: [{ name: 'Query', fields: [{ name: 'x', type: 'string' }] }] },
        schemas: {},
        git_commit: 'a'.repeat(40),
        git_commit_timestamp: '1606295532',
      },
      'b'.repeat(64),
    );
    const other = await startBundleServer(withGit);
    try {
      const info = await fetch(`${other.url}/git-commit-info/${'b'.repeat(64)}`);
      expect(await info.json()).toEqual({ commit: 'a'.repeat(40), timestamp: '1606295532' });
      const latest = await fetch(`${other.url}/git-commit-info`);
      expect(await latest.json()).toEqual({ commit: 'a'.repeat(40), timestamp: '1606295532' });
      const commit = await fetch(`${other.url}/git-commit`);
      expect(await commit.text()).toBe('a'.repeat(40));
    } finally {
      await other.close();
    }
  });

  it('redirects / to /graphql and 404s unknown paths', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/graphql');
    expect(await root.text()).toBe('Found. Redirecting to /graphql');
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });
});

/** Express's final handler page (finalhandler 2, as Express 5 uses it). */
const expressPage = (message: string) =>
  `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${message}</pre>\n</body>\n</html>\n`;

describe('startBundleServer answers as qontract-server (Express 5, NODE_ENV=production)', () => {
  const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);
  const answer = async (r: Response) => ({
    status: r.status,
    type: r.headers.get('content-type'),
    body: await r.text(),
  });
  const unknown = '0'.repeat(64);

  it('gives a request no route takes the final handler page, naming method and raw path', async () => {
    for (const [method, path, shown] of [
      ['GET', '/nope', '/nope'],
      ['POST', `/graphqlsha/${unknown}`, `/graphqlsha/${unknown}`],
      ['GET', '/graphql/', '/graphql/'],
      ['GET', '/GRAPHQL', '/GRAPHQL'],
      ['POST', '/sha256', '/sha256'],
      ['GET', '/diff/only-one', '/diff/only-one'],
      ['GET', '/sha256/extra', '/sha256/extra'],
      ['GET', '/a%20b/<x>', '/a%20b/%3Cx%3E'],
    ] as const) {
      const r = await get(path, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(await answer(r)).toEqual({
        status: 404,
        type: 'text/html; charset=utf-8',
        body: expressPage(`Cannot ${method} ${shown}`),
      });
      expect(r.headers.get('content-security-policy')).toBe("default-src 'none'");
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it("answers an unknown sha with the route's own 404 text, sent as Express sends strings", async () => {
    for (const path of [
      `/git-commit/${unknown}`,
      `/git-commit-info/${unknown}`,
      `/diff/${unknown}/${engine.sha256}`,
      `/diff/${engine.sha256}/${unknown}/datafile/x.yml`,
    ]) {
      expect(await answer(await get(path))).toEqual({
        status: 404,
        type: 'text/html; charset=utf-8',
        body: `Bundle ${unknown} not found`,
      });
    }
  });

  it('answers a missing file of /diff, with or without a path, and an unknown file type', async () => {
    const at = `/diff/${engine.sha256}/${engine.sha256}`;
    // qontract-server's test/diff: the file path is optional in the route.
    expect(await answer(await get(`${at}/datafile`))).toEqual({
      status: 404,
      type: 'text/html; charset=utf-8',
      body: 'datafile not found',
    });
    expect(await answer(await get(`${at}/resourcefile/nope.yml`))).toEqual({
      status: 404,
      type: 'text/html; charset=utf-8',
      body: 'resourcefile not found',
    });
    expect(await answer(await get(`${at}/other/x.yml`))).toEqual({
      status: 400,
      type: 'text/html; charset=utf-8',
      body: 'unknown filetype other',
    });
  });

  it('matches routes case-insensitively, with a trailing slash and decoded parameters', async () => {
    expect(await (await get('/SHA256/')).text()).toBe(engine.sha256);
    expect((await get('/Healthz')).status).toBe(200);
    const file = await get(
      `/diff/${engine.sha256}/${engine.sha256}/datafile/access%2Froles/dev.yml`,
    );
    expect(file.status).toBe(200);
    expect(((await file.json()) as { datafilepath: string }).datafilepath).toBe(
      '/access/roles/dev.yml',
    );
  });

  it('sends the sha as text/html and health as an empty body without a type', async () => {
    expect(await answer(await get('/sha256'))).toEqual({
      status: 200,
      type: 'text/html; charset=utf-8',
      body: engine.sha256,
    });
    expect(await answer(await get('/healthz'))).toEqual({ status: 200, type: null, body: '' });
  });

  it("refuses a body express.json() cannot read before Apollo sees it, with the final handler's page", async () => {
    for (const body of ['not json', '"a string"']) {
      expect(await answer(await post('/graphql', body))).toEqual({
        status: 400,
        type: 'text/html; charset=utf-8',
        body: expressPage('Bad Request'),
      });
    }
    const big = await post('/graphql', { query: `{ x } #${'x'.repeat(110_000)}` });
    expect(await answer(big)).toEqual({
      status: 413,
      type: 'text/html; charset=utf-8',
      body: expressPage('Payload Too Large'),
    });
  });
});
