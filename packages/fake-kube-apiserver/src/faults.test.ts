import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultInjector } from './faults.ts';
import { type FakeKubeApiServer, startFakeKubeApiServer } from './server.ts';
import { call } from './test-support/client.ts';

describe('FaultInjector', () => {
  it('adds the latency of every matching rule and fails by error rate', () => {
    const draws = [0.1, 0.9];
    const faults = new FaultInjector(() => draws.shift() ?? 0);
    faults.add('a', { latencyMs: 30 });
    faults.add('a', { verb: 'list', latencyMs: 20, status: 503, errorRate: 0.5 });
    expect(faults.decide('a', 'get')).toEqual({ action: 'pass', latencyMs: 30 });
    expect(faults.decide('a', 'list')).toEqual({ action: 'fail', latencyMs: 50, status: 503 });
    expect(faults.decide('a', 'list')).toEqual({ action: 'pass', latencyMs: 50 });
    expect(faults.decide('b', 'list')).toEqual({ action: 'pass', latencyMs: 0 });
  });

  it('narrows a rule to the continued pages of a list (an expired continue token)', () => {
    const faults = new FaultInjector();
    faults.add('a', { verb: 'list', continued: true, status: 410 });
    expect(faults.decide('a', 'list', { continued: false }).action).toBe('pass');
    expect(faults.decide('a', 'list').action).toBe('pass');
    expect(faults.decide('a', 'list', { continued: true })).toEqual({
      action: 'fail',
      latencyMs: 0,
      status: 410,
    });
  });

  it('narrows rules to a resource and a namespace', () => {
    const faults = new FaultInjector();
    faults.add('a', { resource: 'secrets', namespace: 'ns', status: 403 });
    expect(faults.decide('a', 'list', { resource: 'secrets', namespace: 'ns' }).action).toBe(
      'fail',
    );
    expect(faults.decide('a', 'list', { resource: 'secrets', namespace: 'other' }).action).toBe(
      'pass',
    );
    expect(faults.decide('a', 'list', { resource: 'configmaps', namespace: 'ns' }).action).toBe(
      'pass',
    );
  });

  it('lets a rule lapse after `times` matches', () => {
    const faults = new FaultInjector();
    faults.add('a', { status: 500, times: 1 });
    expect(faults.decide('a', 'get').action).toBe('fail');
    expect(faults.decide('a', 'get').action).toBe('pass');
  });
});

describe('fault injection over HTTP', () => {
  let server: FakeKubeApiServer;
  beforeAll(async () => {
    server = await startFakeKubeApiServer({ clusters: [{ name: 'a' }, { name: 'b' }] });
  });
  afterEach(() => server.faults.clear());
  afterAll(() => server.close());

  const get = (cluster: string) =>
    call(server.cluster(cluster), 'GET', '/api/v1/namespaces/default');

  it('injects 500 and 503 per cluster and verb', async () => {
    server.faults.set('a', { verb: 'get', status: 503 });
    const failed = await get('a');
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    expect((await get('b')).status).toBe(200);
    expect((await call(server.cluster('a'), 'GET', '/api/v1/namespaces')).status).toBe(200);
    server.faults.clear('a');
    server.faults.set('a', { status: 500, times: 1 });
    expect((await get('a')).status).toBe(500);
    expect((await get('a')).status).toBe(200);
  });

  it('injects any status with its real reason, narrowed to a resource', async () => {
    server.faults.set('a', { resource: 'secrets', status: 403 });
    const secrets = await call(server.cluster('a'), 'GET', '/api/v1/namespaces/default/secrets');
    expect(secrets.status).toBe(403);
    expect(secrets.body).toMatchObject({ reason: 'Forbidden', code: 403 });
    expect(
      (await call(server.cluster('a'), 'GET', '/api/v1/namespaces/default/configmaps')).status,
    ).toBe(200);
  });

  it('answers 429 with Retry-After', async () => {
    server.faults.set('a', { status: 429, retryAfter: 2 });
    const reply = await get('a');
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('2');
    expect(reply.body).toMatchObject({
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 2 },
    });
  });

  it('applies latency and still answers', async () => {
    server.faults.set('a', { latencyMs: 25 });
    expect((await get('a')).status).toBe(200);
  });

  it('drops connections', async () => {
    server.resetLog();
    server.faults.set('a', { drop: true, times: 1 });
    await expect(get('a')).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(server.requestLog).toEqual([
      expect.objectContaining({ cluster: 'a', verb: 'get', status: 0 }),
    ]);
    expect((await get('a')).status).toBe(200);
  });

  it('hangs requests: never answered until the server closes the connection', async () => {
    server.resetLog();
    server.faults.set('a', { verb: 'get', hang: true, times: 1 });
    const hung = get('a').then(
      () => 'answered',
      () => 'reset',
    );
    const waited = await Promise.race([
      hung,
      new Promise((r) => setTimeout(() => r('still waiting'), 300)),
    ]);
    expect(waited).toBe('still waiting');
    expect(server.requestLog).toEqual([
      expect.objectContaining({ cluster: 'a', verb: 'get', status: 0 }),
    ]);
    expect((await get('b')).status).toBe(200);
    await server.faults.down('a');
    expect(await hung).toBe('reset');
    await server.faults.up('a');
    expect((await get('a')).status).toBe(200);
  });

  it('takes a cluster down and up again at the socket level', async () => {
    await server.faults.down('a');
    await expect(get('a')).rejects.toThrow(/ECONNREFUSED/);
    expect((await get('b')).status).toBe(200);
    await server.faults.up('a');
    expect((await get('a')).status).toBe(200);
  });

  it('logs requests so tests can assert that nothing was written', async () => {
    server.resetLog();
    await get('a');
    expect(server.mutatingRequests()).toEqual([]);
    await call(server.cluster('b'), 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'w' } },
    });
    expect(server.mutatingRequests()).toEqual([
      expect.objectContaining({ cluster: 'b', verb: 'create', kind: 'ConfigMap' }),
    ]);
    expect(server.mutatingRequests({ cluster: 'a' })).toEqual([]);
  });
});
