import { afterEach, describe, expect, it } from 'vitest';
import { type FakePagerDuty, startFakePagerDuty } from './fake-pagerduty.ts';
import { crawl } from './url-crawl.ts';

let pd: FakePagerDuty | undefined;
afterEach(async () => {
  await pd?.close();
  pd = undefined;
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read PagerDuty's JSON answers loosely
type Json = any;

async function get(
  path: string,
  token = pd?.token,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${pd?.url}${path}`, {
    headers: {
      Authorization: `Token token=${token}`,
      Accept: 'application/vnd.pagerduty+json;version=2',
    },
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

describe('fake PagerDuty', () => {
  it('refuses a bad token with 401 and PagerDuty error body', async () => {
    pd = await startFakePagerDuty({ token: 'good' });
    const answer = await get('/users', 'bad');
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: { message: 'Unauthorized', code: 2006 } });
    expect(pd.requestLog).toEqual([{ method: 'GET', path: '/users', query: '', status: 401 }]);
  });

  it('pages users classically: limit (25 by default, 100 at most), offset, more, total', async () => {
    pd = await startFakePagerDuty({
      users: Array.from({ length: 130 }, (_, n) => ({ id: `U${n}`, email: `u${n}@example.com` })),
    });
    const first = await get('/users');
    expect(first.body).toMatchObject({ limit: 25, offset: 0, more: true, total: null });
    expect(first.body.users).toHaveLength(25);
    expect(first.body.users[0]).toMatchObject({
      id: 'U0',
      type: 'user',
      email: 'u0@example.com',
      name: 'u0',
      self: `${pd.url}/users/U0`,
    });
    const capped = await get('/users?limit=500&offset=100&total=true');
    expect(capped.body).toMatchObject({ limit: 100, offset: 100, more: false, total: 130 });
    expect(capped.body.users.map((u: { id: string }) => u.id)).toEqual(
      Array.from({ length: 30 }, (_, n) => `U${n + 100}`),
    );
    const bad = await get('/users?offset=-1');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ message: 'Invalid Input Provided', code: 2001 });
  });

  it('renders the final schedule for the asked window', async () => {
    pd = await startFakePagerDuty({
      users: [
        { id: 'PA', email: 'a@example.com', name: 'Ann' },
        { id: 'PB', email: 'b@example.com' },
        { id: 'PC', email: 'c@example.com' },
      ],
      schedules: [
        {
          id: 'PS1',
          name: 'Primary',
          onCall: [
            'PA',
            { user: 'PB', start: '2025-01-01T10:00:00Z', end: '2025-01-01T10:30:00Z' },
            { user: 'PC', start: '2025-01-02T00:00:00Z' },
          ],
        },
      ],
    });
    pd.deleteUser('PA');
    const answer = await get(
      '/schedules/PS1?since=2025-01-01T10:15:00Z&until=2025-01-01T11:00:00Z&time_zone=UTC',
    );
    expect(answer.status).toBe(200);
    expect(answer.body.schedule).toMatchObject({ id: 'PS1', type: 'schedule', name: 'Primary' });
    const entries = answer.body.schedule.final_schedule.rendered_schedule_entries;
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({
      start: '2025-01-01T10:15:00.000Z',
      end: '2025-01-01T11:00:00.000Z',
      user: { id: 'PA', type: 'user_reference', summary: 'Ann' },
    });
    expect(entries[0].user.deleted_at).toEqual(expect.any(String));
    expect(entries[1]).toEqual({
      start: '2025-01-01T10:15:00.000Z',
      end: '2025-01-01T10:30:00.000Z',
      user: {
        id: 'PB',
        type: 'user_reference',
        summary: 'b@example.com',
        self: `${pd.url}/users/PB`,
        html_url: 'https://acme.pagerduty.com/users/PB',
      },
    });
    // A deleted user is gone from the users API.
    expect((await get('/users/PA')).status).toBe(404);
    expect((await get('/users')).body.users.map((u: { id: string }) => u.id)).toEqual(['PB', 'PC']);
    const bad = await get('/schedules/PS1?since=yesterday');
    expect(bad.body).toEqual({
      error: { message: "Invalid 'since' or 'until' Parameter Values", code: 2004 },
    });
  });

  it('serves escalation policies with schedule and user references', async () => {
    pd = await startFakePagerDuty({
      escalationPolicies: [
        {
          id: 'PE1',
          rules: [
            { delayMinutes: 0, targets: [{ type: 'schedule', id: 'PS1' }] },
            { delayMinutes: 30, targets: [{ type: 'user', id: 'PA' }] },
          ],
        },
      ],
    });
    const answer = await get('/escalation_policies/PE1');
    expect(answer.body.escalation_policy).toMatchObject({
      id: 'PE1',
      type: 'escalation_policy',
      escalation_rules: [
        { escalation_delay_in_minutes: 0, targets: [{ id: 'PS1', type: 'schedule_reference' }] },
        { escalation_delay_in_minutes: 30, targets: [{ id: 'PA', type: 'user_reference' }] },
      ],
    });
    const missing = await get('/escalation_policies/NOPE');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { message: 'Not Found', code: 2100 } });
  });

  it('serves the `self` URL of every object it answers, as PagerDuty does', async () => {
    pd = await startFakePagerDuty({
      users: [
        { id: 'PA', email: 'a@example.com' },
        { id: 'PB', email: 'b@example.com' },
      ],
      schedules: [{ id: 'PS1', onCall: ['PA'] }],
      escalationPolicies: [
        {
          id: 'PE1',
          rules: [
            { delayMinutes: 0, targets: [{ type: 'schedule', id: 'PS1' }] },
            { delayMinutes: 5, targets: [{ type: 'user', id: 'PB' }] },
          ],
        },
      ],
    });
    const results = await crawl({
      start: ['/users', '/escalation_policies/PE1'].map((p) => `${pd?.url}${p}`),
      within: pd.url,
      headers: { Authorization: `Token token=${pd.token}` },
    });
    // `html_url` and `avatar_url` are the web UI's, not the API's.
    expect(results.map((r) => [new URL(r.url).pathname, r.key, r.status, r.contentType])).toEqual([
      ['/users', '', 200, 'application/json; charset=utf-8'],
      ['/escalation_policies/PE1', '', 200, 'application/json; charset=utf-8'],
      ['/users/PA', 'self', 200, 'application/json; charset=utf-8'],
      ['/users/PB', 'self', 200, 'application/json; charset=utf-8'],
      ['/schedules/PS1', 'self', 200, 'application/json; charset=utf-8'],
    ]);
  });

  it('answers 429 with the rate-limit headers when told to, then recovers', async () => {
    pd = await startFakePagerDuty({ users: [{ id: 'PA', email: 'a@example.com' }] });
    pd.rateLimit({ path: '/users', resetSeconds: 12 });
    const limited = await get('/users/PA');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: { message: 'Rate Limit Exceeded', code: 2020 } });
    expect(limited.headers.get('ratelimit-reset')).toBe('12');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect((await get('/users/PA')).status).toBe(200);
    expect(pd.requestLog.map((r) => r.status)).toEqual([429, 200]);
    expect(pd.mutatingRequests()).toEqual([]);
  });
});
