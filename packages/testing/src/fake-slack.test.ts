import {
  type ConversationsListResponse,
  ErrorCode,
  LogLevel,
  type UsersListResponse,
  type WebAPIPlatformError,
  WebClient,
  WebClientEvent,
} from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from './fake-slack.ts';

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

/** The real client, pointed at the fake, with retries short enough for a test. */
function client(fake: FakeSlack, token = fake.token): WebClient {
  return new WebClient(token, {
    slackApiUrl: fake.apiUrl,
    logLevel: LogLevel.ERROR,
    retryConfig: { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 10 },
  });
}

const USERS = Array.from({ length: 7 }, (_, n) => ({
  id: `U${n}`,
  name: `user${n}`,
  email: `user${n}@example.com`,
}));

describe('fake Slack Web API through @slack/web-api', () => {
  it('answers a wrong token with invalid_auth and none with not_authed', async () => {
    slack = await startFakeSlack({ token: 'xoxb-good' });
    const wrong = client(slack, 'xoxb-bad');
    const err = (await wrong.users.list({}).catch((e: unknown) => e)) as WebAPIPlatformError;
    expect(err.code).toBe(ErrorCode.PlatformError);
    expect(err.data).toMatchObject({ ok: false, error: 'invalid_auth' });
    const none = await fetch(`${slack.apiUrl}users.list`, { method: 'POST' });
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ ok: false, error: 'not_authed' });
  });

  it('pages users.list with response_metadata.next_cursor, empty on the last page', async () => {
    slack = await startFakeSlack({ users: USERS });
    const web = client(slack);
    const first = await web.users.list({ limit: 3 });
    expect(first.members?.map((m) => m.id)).toEqual(['U0', 'U1', 'U2']);
    expect(first.members?.[0]).toMatchObject({
      name: 'user0',
      deleted: false,
      is_bot: false,
      profile: { email: 'user0@example.com' },
    });
    expect(first.response_metadata?.next_cursor).not.toBe('');
    const ids: string[] = [];
    for await (const page of web.paginate('users.list', {
      limit: 3,
    }) as AsyncIterable<UsersListResponse>) {
      ids.push(...(page.members ?? []).map((m) => m.id ?? ''));
    }
    expect(ids).toEqual(USERS.map((u) => u.id));
    // Three pages: 3 + 3 + 1, then the empty cursor stops the client.
    expect(slack.requestLog.filter((r) => r.path === '/api/users.list')).toHaveLength(4);
    const all = await web.users.list({});
    expect(all.members).toHaveLength(7);
    expect(all.response_metadata?.next_cursor).toBe('');
    await expect(web.users.list({ cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({
      data: { ok: false, error: 'invalid_cursor' },
    });
  });

  it('lists conversations by type, without archived ones on request, paged', async () => {
    slack = await startFakeSlack({
      channels: [
        { id: 'C1', name: 'sd-app-sre' },
        { id: 'C2', name: 'old', isArchived: true },
        { id: 'C3', name: 'secret', isPrivate: true },
        { id: 'C4', name: 'deploys' },
      ],
    });
    const web = client(slack);
    const names: string[] = [];
    for await (const page of web.paginate('conversations.list', {
      limit: 1,
      exclude_archived: true,
    }) as AsyncIterable<ConversationsListResponse>) {
      names.push(...(page.channels ?? []).map((c) => c.name ?? ''));
    }
    expect(names).toEqual(['sd-app-sre', 'deploys']);
    const both = await web.conversations.list({ types: 'public_channel,private_channel' });
    expect(both.channels?.map((c) => c.id)).toEqual(['C1', 'C2', 'C3', 'C4']);
    expect(both.channels?.[2]).toMatchObject({ is_private: true, is_channel: false });
  });

  it('posts messages by channel id or #name and counts them as writes', async () => {
    slack = await startFakeSlack({ channels: [{ id: 'C1', name: 'deploys' }] });
    const web = client(slack);
    const answer = await web.chat.postMessage({
      channel: '#deploys',
      text: 'deployed',
      icon_emoji: ':rocket:',
    });
    expect(answer).toMatchObject({ ok: true, channel: 'C1', message: { text: 'deployed' } });
    expect(answer.ts).toMatch(/^\d+\.\d{6}$/);
    expect(slack.messages).toEqual([
      expect.objectContaining({ channel: 'C1', text: 'deployed', ts: answer.ts }),
    ]);
    expect(slack.messages[0]?.fields.icon_emoji).toBe(':rocket:');
    expect(JSON.stringify(slack.messages)).not.toContain(slack.token);
    await expect(web.chat.postMessage({ channel: '#nowhere', text: 'x' })).rejects.toMatchObject({
      data: { error: 'channel_not_found' },
    });
    expect(slack.messages).toHaveLength(1);
    expect(slack.writeCount()).toBe(2);
  });

  it('creates, updates, lists user groups and replaces their members', async () => {
    slack = await startFakeSlack({
      users: USERS,
      channels: [{ id: 'C1', name: 'team' }],
      usergroups: [{ id: 'S1', handle: 'old', users: ['U0'], disabled: true }],
    });
    const web = client(slack);
    const created = await web.usergroups.create({ name: 'App SRE', handle: 'app-sre-team' });
    const id = created.usergroup?.id ?? '';
    expect(created.usergroup).toMatchObject({ handle: 'app-sre-team', name: 'App SRE' });
    await expect(
      web.usergroups.create({ name: 'other', handle: 'app-sre-team' }),
    ).rejects.toMatchObject({ data: { error: 'handle_already_exists' } });

    const updated = await web.usergroups.update({
      usergroup: id,
      description: 'the team',
      channels: 'C1',
    });
    expect(updated.usergroup).toMatchObject({
      description: 'the team',
      prefs: { channels: ['C1'] },
    });
    await expect(web.usergroups.update({ usergroup: 'S404', name: 'x' })).rejects.toMatchObject({
      data: { error: 'no_such_subteam' },
    });

    const members = await web.usergroups.users.update({ usergroup: id, users: 'U1,U2' });
    expect(members.usergroup?.users).toEqual(['U1', 'U2']);
    await expect(web.usergroups.users.update({ usergroup: id, users: '' })).rejects.toMatchObject({
      data: { error: 'invalid_users' },
    });
    expect((await web.usergroups.users.list({ usergroup: id })).users).toEqual(['U1', 'U2']);

    const listed = await web.usergroups.list({ include_users: true, include_count: true });
    expect(listed.usergroups?.map((g) => g.handle)).toEqual(['app-sre-team']);
    expect(listed.usergroups?.[0]).toMatchObject({ users: ['U1', 'U2'], user_count: 2 });
    const withDisabled = await web.usergroups.list({ include_disabled: true });
    expect(withDisabled.usergroups?.map((g) => g.handle)).toEqual(['old', 'app-sre-team']);
    expect(withDisabled.usergroups?.[0]).not.toHaveProperty('users');
    expect(slack.usergroup('app-sre-team')?.users).toEqual(['U1', 'U2']);
    // create ×2, update ×2, users.update ×2: attempts count, refused or not.
    expect(slack.writeCount()).toBe(6);
  });

  it('rate-limits as Slack does: 429 with Retry-After, which WebClient waits out', async () => {
    slack = await startFakeSlack({ users: USERS });
    slack.rateLimit({ method: 'users.list', times: 1, retryAfterSeconds: 1 });
    const web = client(slack);
    const limited: number[] = [];
    web.on(WebClientEvent.RATE_LIMITED, (seconds: number) => limited.push(seconds));
    const started = Date.now();
    const answer = await web.users.list({});
    expect(answer.members).toHaveLength(7);
    expect(limited).toEqual([1]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(slack.requestLog.map((r) => r.status)).toEqual([429, 200]);

    const raw = await fetch(`${slack.apiUrl}users.list`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${slack.token}` },
    });
    expect(raw.status).toBe(200);
    slack.rateLimit({ retryAfterSeconds: 7 });
    const refused = await fetch(`${slack.apiUrl}chat.postMessage`, { method: 'POST' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('7');
    expect(await refused.json()).toEqual({ ok: false, error: 'ratelimited' });
  });

  it('gives up when rate limits never end and the client rejects them', async () => {
    slack = await startFakeSlack({ users: USERS });
    slack.rateLimit({ method: 'usergroups.list', times: Number.POSITIVE_INFINITY });
    const web = new WebClient(slack.token, {
      slackApiUrl: slack.apiUrl,
      logLevel: LogLevel.ERROR,
      rejectRateLimitedCalls: true,
    });
    await expect(web.usergroups.list({})).rejects.toMatchObject({
      code: ErrorCode.RateLimitedError,
      retryAfter: 1,
    });
    expect(slack.writeCount()).toBe(0);
  });
});
