import { afterEach, describe, expect, it } from 'vitest';
import { type FakePrometheus, startFakePrometheus } from './fake-prometheus.ts';

let prometheus: FakePrometheus | undefined;
afterEach(async () => {
  await prometheus?.close();
  prometheus = undefined;
});

async function query(fake: FakePrometheus, q: string, headers: Record<string, string> = {}) {
  const res = await fetch(
    `${fake.url}/api/v1/query?query=${encodeURIComponent(q)}&time=1700000000.5`,
    {
      headers,
    },
  );
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('fake Prometheus query API', () => {
  it("answers vectors and scalars as Prometheus does: [seconds, 'value'] with string values", async () => {
    prometheus = await startFakePrometheus();
    prometheus.setVector('sli{app="x"}', [{ metric: { app: 'x' }, value: 0.995 }]);
    prometheus.setScalar('scalar(1)', Number.NaN);
    const vector = await query(prometheus, 'sli{app="x"}');
    expect(vector.status).toBe(200);
    expect(JSON.parse(vector.text)).toEqual({
      status: 'success',
      data: {
        resultType: 'vector',
        result: [{ metric: { app: 'x' }, value: [1700000000.5, '0.995'] }],
      },
    });
    expect(JSON.parse((await query(prometheus, 'scalar(1)')).text)).toEqual({
      status: 'success',
      data: { resultType: 'scalar', result: [1700000000.5, 'NaN'] },
    });
    // A selector matching nothing: an empty vector, not an error.
    expect(JSON.parse((await query(prometheus, 'absent_metric')).text).data).toEqual({
      resultType: 'vector',
      result: [],
    });
    expect(prometheus.queries).toEqual(['sli{app="x"}', 'scalar(1)', 'absent_metric']);
  });

  it('takes a form-encoded POST as the API does', async () => {
    prometheus = await startFakePrometheus();
    prometheus.setVector('up', [{ value: 1 }]);
    const res = await fetch(`${prometheus.url}/api/v1/query`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: 'up' }),
    });
    const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
    expect(body.data.result[0]?.value[1]).toBe('1');
  });

  it('answers errors with the error envelope and its status: 400 bad_data, 422, 503', async () => {
    prometheus = await startFakePrometheus();
    prometheus.setError(
      'rate(x[5m',
      400,
      'bad_data',
      'invalid parameter "query": 1:9: parse error',
    );
    prometheus.setError('slow', 503, 'timeout', 'query timed out in expression evaluation');
    const bad = await query(prometheus, 'rate(x[5m');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toEqual({
      status: 'error',
      errorType: 'bad_data',
      error: 'invalid parameter "query": 1:9: parse error',
    });
    expect((await query(prometheus, 'slow')).status).toBe(503);
    const missing = await fetch(`${prometheus.url}/api/v1/query`);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { errorType: string }).errorType).toBe('bad_data');
  });

  it('refuses requests without the Bearer token or Basic credentials (401, before the API)', async () => {
    prometheus = await startFakePrometheus({
      bearerToken: 'cluster-token',
      basic: { username: 'slo', password: 'secret-pw' },
    });
    const none = await query(prometheus, 'up');
    expect(none).toMatchObject({ status: 401, text: 'Unauthorized\n' });
    expect(none.type).toMatch(/^text\/plain/);
    expect((await query(prometheus, 'up', { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await query(prometheus, 'up', { Authorization: 'Bearer cluster-token' })).status).toBe(
      200,
    );
    const basic = `Basic ${Buffer.from('slo:secret-pw').toString('base64')}`;
    expect((await query(prometheus, 'up', { Authorization: basic })).status).toBe(200);
    // Refused requests are in the request log, not among the queries.
    expect(prometheus.requestLog.map((r) => r.status)).toEqual([401, 401, 200, 200]);
    expect(prometheus.queries).toEqual(['up', 'up']);
  });
});
