import { afterEach, describe, expect, it } from 'vitest';
import { type HttpFake, startHttpFake } from './http-fake.ts';

let fake: HttpFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const echo = () =>
  startHttpFake({
    handle: (req) => ({ status: 200, body: { method: req.method, body: req.body ?? null } }),
  });

describe('startHttpFake', () => {
  it('answers JSON, parses JSON and form bodies, and logs every request', async () => {
    fake = await echo();
    const json = await fetch(`${fake.url}/a?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 1 }),
    });
    expect(json.headers.get('content-type')).toContain('application/json');
    expect(await json.json()).toEqual({ method: 'POST', body: { n: 1 } });
    const form = await fetch(`${fake.url}/b`, {
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'access_level=30&user_id=7',
    });
    expect(await form.json()).toEqual({
      method: 'PUT',
      body: { access_level: '30', user_id: '7' },
    });
    await fetch(`${fake.url}/c`);
    expect(fake.requestLog).toEqual([
      { method: 'POST', path: '/a', query: '?x=1', status: 200 },
      { method: 'PUT', path: '/b', query: '', status: 200 },
      { method: 'GET', path: '/c', query: '', status: 200 },
    ]);
    expect(fake.mutatingRequests().map((r) => r.path)).toEqual(['/a', '/b']);
  });

  it('injects failures by method and path, a limited number of times', async () => {
    fake = await echo();
    fake.faults.add({
      method: 'GET',
      path: /^\/limited/,
      status: 429,
      headers: { 'Retry-After': '1' },
      times: 1,
    });
    const first = await fetch(`${fake.url}/limited/x`);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(await first.json()).toEqual({ message: 'injected fault' });
    expect((await fetch(`${fake.url}/limited/x`)).status).toBe(200);
    expect((await fetch(`${fake.url}/other`, { method: 'POST' })).status).toBe(200);
  });

  it('resets the connection of a dropped request and closes with a hung one open', async () => {
    fake = await echo();
    fake.faults.add({ path: '/drop', drop: true });
    fake.faults.add({ path: '/hang', hang: true });
    await expect(fetch(`${fake.url}/drop`)).rejects.toThrow();
    const hung = fetch(`${fake.url}/hang`).catch((e: unknown) => e);
    await expect.poll(() => fake?.requestLog.length).toBe(2);
    await fake.close();
    fake = undefined;
    expect(await hung).toBeInstanceOf(Error);
  });
});
