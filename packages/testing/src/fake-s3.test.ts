import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeS3, startFakeS3 } from './fake-s3.ts';

describe('the fake S3', () => {
  let s3: FakeS3;
  beforeAll(async () => {
    s3 = await startFakeS3({ buckets: ['bench'] });
  });
  afterAll(() => s3.close());

  it('logs every request with its answer and waits the injected latency first', async () => {
    const put = await fetch(`${s3.endpoint}/bench/state/k`, { method: 'PUT', body: 'v' });
    expect(put.status).toBe(200);
    s3.latencyMs = 40;
    const started = performance.now();
    const got = await fetch(`${s3.endpoint}/bench/state/k`);
    expect(await got.text()).toBe('v');
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    const missing = await fetch(`${s3.endpoint}/bench/state/none`);
    await missing.text();
    expect(s3.requestLog).toEqual([
      { method: 'PUT', path: '/bench/state/k', status: 200 },
      { method: 'GET', path: '/bench/state/k', status: 200 },
      { method: 'GET', path: '/bench/state/none', status: 404 },
    ]);
  });
});
