import { createLogger, QontractError, SecretRedactor, type SecretRef } from '@qontract/core';
import { type FakePagerDuty, startFakePagerDuty } from '@qontract/testing/fake-pagerduty';
import { afterEach, describe, expect, it } from 'vitest';
import { PagerDutyApiError, type PagerDutyInstanceRef, pagerDutyMap } from './map.ts';

const TOKEN = 'u+pd-secret-token-0123456789';
const NOW = new Date('2025-03-10T12:00:00Z');
const acme: PagerDutyInstanceRef = { name: 'acme', token: { path: 'pd/acme', field: 'token' } };

let pd: FakePagerDuty | undefined;
afterEach(async () => {
  await pd?.close();
  pd = undefined;
});

/** A run context against the fake: secrets by path, recorded retry waits and log lines. */
function harness(
  fake: FakePagerDuty,
  opts: { tokens?: Record<string, string>; signal?: AbortSignal } = {},
) {
  const sleeps: number[] = [];
  const logs: string[] = [];
  const tokens = opts.tokens ?? { 'pd/acme': TOKEN };
  const ctx = {
    secrets: {
      read: async (ref: SecretRef) => tokens[ref.path] ?? 'missing',
      readAll: async () => ({}),
    },
    env: { vars: { PAGERDUTY_API_URL: fake.url } },
    signal: opts.signal ?? new AbortController().signal,
    log: createLogger({
      level: 'DEBUG',
      format: 'json',
      dryRun: false,
      redactor: new SecretRedactor(),
      destination: { write: (line: string) => logs.push(line) },
    }),
  };
  const options = {
    sleep: async (ms: number) => {
      sleeps.push(ms);
    },
  };
  return { ctx, options, sleeps, logs };
}

function target(fields: { scheduleID?: string; escalationPolicyID?: string; instance?: string }) {
  return {
    name: 'sre-oncall',
    instance: { name: fields.instance ?? 'acme' },
    scheduleID: fields.scheduleID ?? null,
    escalationPolicyID: fields.escalationPolicyID ?? null,
  };
}

const requests = (fake: FakePagerDuty, prefix: string) =>
  fake.requestLog.filter((r) => r.path.startsWith(prefix));

async function fakeWithTeam(): Promise<FakePagerDuty> {
  return startFakePagerDuty({
    token: TOKEN,
    users: [
      { id: 'PU1', email: 'alice@example.com' },
      { id: 'PU2', email: 'bob+pd@example.com' },
      { id: 'PU3', email: 'carol@example.com' },
      { id: 'PU4', email: 'dave@example.com' },
    ],
  });
}

describe('onCall for a schedule', () => {
  it('names who is on call in the next minute, by email local part', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({
      id: 'PS1',
      onCall: [
        'PU1',
        { user: 'PU2', start: '2025-03-10T11:00:00Z', end: '2025-03-10T12:00:30Z' },
        { user: 'PU3', start: '2025-03-10T12:05:00Z' },
        { user: 'PU4', end: '2025-03-10T11:59:00Z' },
      ],
    });
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual(['alice', 'bob+pd']);
    const [schedule] = requests(pd, '/schedules');
    const query = new URLSearchParams(schedule?.query);
    expect(query.get('since')).toBe('2025-03-10T12:00:00.000Z');
    expect(query.get('until')).toBe('2025-03-10T12:01:00.000Z');
    expect(query.get('time_zone')).toBe('UTC');
  });

  it('leaves out deleted users', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1', 'PU2'] });
    pd.deleteUser('PU2');
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual(['alice']);
    expect(requests(pd, '/users/PU2')).toEqual([]);
  });

  it('lists the users once per client, fetching only those the list lacks', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1', 'PU9'] });
    pd.addSchedule({ id: 'PS2', onCall: ['PU9', 'PU3'] });
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    // PU9 joins after the listing: fetched by id once, then known.
    await map.onCall(target({ scheduleID: 'PS2' }), NOW).catch(() => {});
    pd.addUser({ id: 'PU9', email: 'erin@example.com' });
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual(['alice', 'erin']);
    expect(await map.onCall(target({ scheduleID: 'PS2' }), NOW)).toEqual(['erin', 'carol']);
    expect(requests(pd, '/users').map((r) => r.path + r.query)).toEqual([
      '/users?limit=100&offset=0',
      '/users/PU9',
      '/users/PU9',
    ]);
  });

  it('pages through all users (classic limit/offset pagination)', async () => {
    pd = await startFakePagerDuty({
      token: TOKEN,
      users: Array.from({ length: 230 }, (_, n) => ({
        id: `U${n}`,
        email: `user${n}@example.com`,
      })),
    });
    pd.addSchedule({ id: 'PS1', onCall: ['U229', 'U0', 'U150'] });
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual([
      'user229',
      'user0',
      'user150',
    ]);
    expect(requests(pd, '/users').map((r) => r.query)).toEqual([
      '?limit=100&offset=0',
      '?limit=100&offset=100',
      '?limit=100&offset=200',
    ]);
  });
});

describe('onCall for an escalation policy', () => {
  it('walks the rules until one finds someone and the next escalation is not immediate', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'EMPTY', onCall: [] });
    pd.addSchedule({ id: 'PRIMARY', onCall: ['PU2'] });
    pd.addSchedule({ id: 'TERTIARY', onCall: ['PU4'] });
    pd.addEscalationPolicy({
      id: 'PE1',
      rules: [
        // nobody here: go on, whatever the delay
        { delayMinutes: 30, targets: [{ type: 'schedule', id: 'EMPTY' }] },
        // someone, but the next rule fires at once: go on
        { delayMinutes: 0, targets: [{ type: 'user', id: 'PU1' }] },
        // someone, and the next rule waits 15 minutes: stop after this one
        {
          delayMinutes: 15,
          targets: [
            { type: 'schedule', id: 'PRIMARY' },
            { type: 'user', id: 'PU3' },
          ],
        },
        { delayMinutes: 30, targets: [{ type: 'schedule', id: 'TERTIARY' }] },
      ],
    });
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ escalationPolicyID: 'PE1' }), NOW)).toEqual([
      'alice',
      'bob+pd',
      'carol',
    ]);
    expect(requests(pd, '/schedules').map((r) => r.path)).toEqual([
      '/schedules/EMPTY',
      '/schedules/PRIMARY',
    ]);
  });

  it('takes every rule when each escalates at once, and the policy over the schedule', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU4'] });
    pd.addEscalationPolicy({
      id: 'PE1',
      rules: [
        { delayMinutes: 0, targets: [{ type: 'user', id: 'PU1' }] },
        { delayMinutes: 0, targets: [{ type: 'schedule', id: 'PS1' }] },
      ],
    });
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    const both = target({ escalationPolicyID: 'PE1', scheduleID: 'NOT-ASKED' });
    expect(await map.onCall(both, NOW)).toEqual(['alice', 'dave']);
    expect(requests(pd, '/schedules/NOT-ASKED')).toEqual([]);
  });
});

describe('retries', () => {
  it('waits out a 429 for as long as ratelimit-reset says', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1'] });
    pd.rateLimit({ path: '/schedules/', times: 2, resetSeconds: 7 });
    const { ctx, options, sleeps, logs } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual(['alice']);
    expect(sleeps).toEqual([7000, 7000]);
    expect(requests(pd, '/schedules').map((r) => r.status)).toEqual([429, 429, 200]);
    expect(logs.join('\n')).toContain(
      'PagerDuty instance acme: GET /schedules/PS1: HTTP 429: Rate Limit Exceeded (code 2020), retrying in 7s (attempt 1/5)',
    );
  });

  it('honours Retry-After and caps every wait', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1'] });
    pd.faults.add({ path: '/schedules/', status: 429, headers: { 'Retry-After': '3' }, times: 1 });
    pd.rateLimit({ path: '/schedules/', resetSeconds: 3600 });
    const { ctx, options, sleeps } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual(['alice']);
    expect(sleeps).toEqual([3000, 60_000]);
  });

  it('retries server errors and lost connections with a growing back-off', async () => {
    pd = await fakeWithTeam();
    pd.addEscalationPolicy({
      id: 'PE1',
      rules: [{ delayMinutes: 5, targets: [{ type: 'user', id: 'PU1' }] }],
    });
    pd.faults.add({ path: '/escalation_policies/', status: 502, times: 1 });
    pd.faults.add({ path: '/escalation_policies/', drop: true, times: 1 });
    const { ctx, options, sleeps } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    expect(await map.onCall(target({ escalationPolicyID: 'PE1' }), NOW)).toEqual(['alice']);
    expect(sleeps).toEqual([1000, 2000]);
  });

  it('gives up after the attempts, with an error naming the target', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1'] });
    pd.rateLimit({ path: '/schedules/', times: 100 });
    const { ctx, options, sleeps } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], { ...options, retry: { attempts: 3 } });
    const error = await map.onCall(target({ scheduleID: 'PS1' }), NOW).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PagerDutyApiError);
    expect((error as Error).message).toBe(
      'pagerduty sre-oncall (schedule PS1 of instance acme): GET /schedules/PS1: HTTP 429: Rate Limit Exceeded (code 2020) (after 3 attempts)',
    );
    expect(sleeps).toEqual([1000, 1000]);
  });
});

describe('errors', () => {
  it('a missing schedule is a clear error naming the target, not retried', async () => {
    pd = await fakeWithTeam();
    const { ctx, options, sleeps } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    const error = await map.onCall(target({ scheduleID: 'PGONE' }), NOW).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QontractError);
    expect((error as Error).message).toBe(
      'pagerduty sre-oncall (schedule PGONE of instance acme): GET /schedules/PGONE: HTTP 404: Not Found (code 2100)',
    );
    expect(sleeps).toEqual([]);
  });

  it('a refused token fails that instance only, and no error or log line shows a token', async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1'] });
    const other: PagerDutyInstanceRef = {
      name: 'other',
      token: { path: 'pd/other', field: 'token' },
    };
    const wrong = 'wrong-token-abcdef-0123456789';
    const { ctx, options, logs } = harness(pd, { tokens: { 'pd/acme': TOKEN, 'pd/other': wrong } });
    const map = await pagerDutyMap(ctx, [acme, other], options);
    const error = await map
      .onCall(target({ scheduleID: 'PS1', instance: 'other' }), NOW)
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'pagerduty sre-oncall (schedule PS1 of instance other): GET /schedules/PS1: HTTP 401: Unauthorized (code 2006)',
    );
    expect(await map.onCall(target({ scheduleID: 'PS1' }), NOW)).toEqual(['alice']);
    for (const text of [(error as Error).message, String((error as Error).cause), ...logs]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(TOKEN);
    }
  });

  it('an answer of the wrong shape is an error, not a guess', async () => {
    pd = await fakeWithTeam();
    pd.faults.add({ path: '/escalation_policies/', status: 200, body: { escalation_policy: {} } });
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    await expect(map.onCall(target({ escalationPolicyID: 'PE1' }), NOW)).rejects.toThrow(
      'pagerduty sre-oncall (escalation policy PE1 of instance acme): GET /escalation_policies/PE1: unexpected answer (escalation_policy.escalation_rules: ',
    );
  });

  it('a target without ids or with an unknown instance is refused before any request', async () => {
    pd = await fakeWithTeam();
    const { ctx, options } = harness(pd);
    const map = await pagerDutyMap(ctx, [acme], options);
    await expect(map.onCall(target({}), NOW)).rejects.toThrow(
      'pagerduty sre-oncall: Either schedule_id or escalation_policy_id must be set!',
    );
    await expect(map.onCall(target({ scheduleID: 'PS1', instance: 'nope' }), NOW)).rejects.toThrow(
      'pagerduty sre-oncall (schedule PS1 of instance nope): no PagerDuty instance named nope',
    );
    expect(pd.requestLog).toEqual([]);
  });

  it("stops on the run's signal, also while waiting out a rate limit", async () => {
    pd = await fakeWithTeam();
    pd.addSchedule({ id: 'PS1', onCall: ['PU1'] });
    pd.rateLimit({ path: '/schedules/', times: 10 });
    const stop = new AbortController();
    const { ctx } = harness(pd, { signal: stop.signal });
    const map = await pagerDutyMap(ctx, [acme], {
      sleep: async () => stop.abort(new Error('SIGTERM')),
    });
    const error = await map.onCall(target({ scheduleID: 'PS1' }), NOW).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(QontractError);
    expect((error as Error).message).toBe('SIGTERM');
    expect(requests(pd, '/schedules')).toHaveLength(1);
    await expect(map.onCall(target({ scheduleID: 'PS1' }), NOW)).rejects.toThrow('SIGTERM');
    expect(requests(pd, '/schedules')).toHaveLength(1);
  });
});
