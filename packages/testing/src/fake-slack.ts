import { type FakeRequest, type FakeResponse, type HttpFake, startHttpFake } from './http-fake.ts';

// Shapes follow Slack's published Web API description, slackapi/slack-api-specs
// `web-api/slack_web_openapi_v2.json` (commit bc08db4): each method's 200 schema (its
// `required` keys), `objs_user`, `objs_subteam`, `objs_conversation`, `objs_message` and
// `objs_response_metadata`, and the error names of each method's `default` schema.
// Where the spec is silent (the 429 answer, the cursor format, `ratelimited`), the
// behaviour is the one Slack documents on api.slack.com (rate limits, pagination) and
// the one `@slack/web-api`'s WebClient expects (it retries a 429 after `Retry-After`).

export interface FakeSlackUser {
  readonly id: string;
  /** The username (`name`); app-interface matches it against `slack_username`. */
  readonly name: string;
  readonly email?: string;
  readonly realName?: string;
  /** A deactivated account: still listed by users.list, with `deleted: true`. */
  readonly deleted?: boolean;
  readonly isBot?: boolean;
}

export interface FakeSlackUsergroup {
  readonly id: string;
  readonly handle: string;
  readonly name?: string;
  readonly description?: string;
  /** Member user ids. */
  readonly users?: readonly string[];
  /** Default channel ids (`prefs.channels`). */
  readonly channels?: readonly string[];
  /** A disabled group: listed only with `include_disabled`. */
  readonly disabled?: boolean;
}

export interface FakeSlackChannel {
  readonly id: string;
  /** Without the leading `#`. */
  readonly name: string;
  readonly isPrivate?: boolean;
  readonly isArchived?: boolean;
}

/** A message chat.postMessage accepted. */
interface FakeSlackMessage {
  readonly channel: string;
  readonly ts: string;
  readonly text: string;
  /** Every field the client sent but the token (blocks, username, icon_emoji, ...). */
  readonly fields: Readonly<Record<string, string>>;
}

export interface FakeSlack extends HttpFake {
  /** The bot token the fake accepts (`Authorization: Bearer <token>`). */
  readonly token: string;
  /** The `slackApiUrl` to give WebClient (`<url>/api/`). */
  readonly apiUrl: string;
  /** Messages posted so far, in order. */
  readonly messages: readonly FakeSlackMessage[];
  addUser(user: FakeSlackUser): void;
  addChannel(channel: FakeSlackChannel): void;
  addUsergroup(group: FakeSlackUsergroup): void;
  /** A user group as it stands now (members and channels included), by handle. */
  usergroup(handle: string): Required<FakeSlackUsergroup> | undefined;
  /**
   * Every call of a method that writes (chat.postMessage, usergroups.create/update/
   * enable/disable, usergroups.users.update, ...) that reached the fake, answered or
   * not: a dry-run must leave this at 0. (Slack's Web API takes POST for reads too,
   * so `mutatingRequests()` of the HTTP fake cannot tell them apart.)
   */
  writeCount(): number;
  /**
   * The next `times` calls (default 1) of `method` (default: every method) are
   * answered as Slack rate-limits: HTTP 429, `Retry-After: <retryAfterSeconds>`
   * (default 1) and `{ok: false, error: 'ratelimited'}`. `times: Infinity` never lets up.
   */
  rateLimit(options?: { method?: string; times?: number; retryAfterSeconds?: number }): void;
}

/** Methods that change the workspace (the ones counted by writeCount). */
const WRITE_METHODS = new Set([
  'chat.postMessage',
  'chat.update',
  'chat.delete',
  'usergroups.create',
  'usergroups.update',
  'usergroups.enable',
  'usergroups.disable',
  'usergroups.users.update',
]);

const TEAM = 'T0FAKE0001';
// A fixed clock for `updated`, `created` and `date_*`, so answers are reproducible.
const EPOCH = 1_700_000_000;

type Params = Record<string, string>;
type Result = Record<string, unknown>;

/**
 * The parts of Slack's Web API that notifications and user-group management use:
 * `chat.postMessage`, `users.list` and `conversations.list` (cursor pagination with
 * `response_metadata.next_cursor`), `usergroups.list`, `usergroups.create`,
 * `usergroups.update`, `usergroups.users.list`, `usergroups.users.update`. Slack's
 * envelope (HTTP 200 with `{ok: true, ...}` or `{ok: false, error}`), bearer-token auth
 * (`not_authed` / `invalid_auth`), rate limits on demand, and the shared request log,
 * latency and fault injection of `startHttpFake`.
 */
export async function startFakeSlack(
  options: {
    token?: string;
    users?: readonly FakeSlackUser[];
    usergroups?: readonly FakeSlackUsergroup[];
    channels?: readonly FakeSlackChannel[];
    latencyMs?: number;
    /** A fixed port (the demo); a free one when absent. */
    port?: number;
  } = {},
): Promise<FakeSlack> {
  const token = options.token ?? 'xoxb-fake-slack-token';
  const ws = new Workspace();
  for (const u of options.users ?? []) ws.users.set(u.id, u);
  for (const c of options.channels ?? []) ws.channels.set(c.id, c);
  for (const g of options.usergroups ?? []) ws.addGroup(g);
  const methods: Record<string, Method> = {
    ...messageMethods(ws),
    ...directoryMethods(ws),
    ...usergroupMethods(ws),
  };
  let writes = 0;

  const handle = (req: FakeRequest): FakeResponse => {
    const m = /^\/api\/([A-Za-z.]+)$/.exec(req.url.pathname);
    const method = m?.[1] ?? '';
    if (WRITE_METHODS.has(method)) writes += 1;
    // Slack answers unknown methods with 404 and its envelope.
    const run = methods[method];
    if (!run) return { status: 404, body: { ok: false, error: 'unknown_method' } };
    const params = { ...Object.fromEntries(req.url.searchParams), ...formFields(req.body) };
    const auth = req.headers.authorization;
    const given = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : params.token;
    // Slack's auth errors come as HTTP 200 with the envelope, like every other error.
    if (!given) return envelope('not_authed');
    if (given !== token) return envelope('invalid_auth');
    return envelope(run(params));
  };

  const http = await startHttpFake({
    handle,
    ...(options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs }),
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  return Object.assign(http, {
    token,
    apiUrl: `${http.url}/api/`,
    messages: ws.messages,
    addUser: (user: FakeSlackUser) => {
      ws.users.set(user.id, user);
    },
    addChannel: (channel: FakeSlackChannel) => {
      ws.channels.set(channel.id, channel);
    },
    addUsergroup: (group: FakeSlackUsergroup) => {
      ws.addGroup(group);
    },
    usergroup: (handle: string) => [...ws.groups.values()].find((g) => g.handle === handle),
    writeCount: () => writes,
    rateLimit: (o: { method?: string; times?: number; retryAfterSeconds?: number } = {}) => {
      http.faults.add({
        ...(o.method === undefined ? {} : { path: `/api/${o.method}` }),
        status: 429,
        times: o.times ?? 1,
        headers: { 'Retry-After': String(o.retryAfterSeconds ?? 1) },
        body: { ok: false, error: 'ratelimited' },
      });
    },
  });
}

/** A Web API method: its parameters → its result, or the error code of Slack's envelope. */
type Method = (p: Params) => Result | string;

/** What the fake workspace holds: its users, channels, user groups and the messages posted. */
class Workspace {
  readonly users = new Map<string, FakeSlackUser>();
  readonly channels = new Map<string, FakeSlackChannel>();
  readonly groups = new Map<string, Required<FakeSlackUsergroup>>();
  readonly messages: FakeSlackMessage[] = [];
  #sequence = 0;

  /** The next number of the ids and timestamps the workspace hands out. */
  next(): number {
    this.#sequence += 1;
    return this.#sequence;
  }

  addGroup(g: FakeSlackUsergroup): void {
    this.groups.set(g.id, {
      id: g.id,
      handle: g.handle,
      name: g.name ?? g.handle,
      description: g.description ?? '',
      users: [...(g.users ?? [])],
      channels: [...(g.channels ?? [])],
      disabled: g.disabled ?? false,
    });
  }

  /** A channel by id, or by name (with or without `#`). */
  findChannel(ref: string | undefined): FakeSlackChannel | undefined {
    if (!ref) return undefined;
    const name = ref.replace(/^#/, '');
    return this.channels.get(ref) ?? [...this.channels.values()].find((c) => c.name === name);
  }

  /** `invalid_channel` when a comma-separated list names a channel id the workspace lacks. */
  checkChannels(raw: string | undefined): string | undefined {
    return list(raw).some((id) => !this.channels.has(id)) ? 'invalid_channel' : undefined;
  }
}

/** `chat.postMessage`. */
function messageMethods(ws: Workspace): Record<string, Method> {
  return {
    'chat.postMessage': (p) => {
      const channel = ws.findChannel(p.channel);
      if (!channel) return 'channel_not_found';
      if (channel.isArchived) return 'is_archived';
      if (!p.text && !p.blocks && !p.attachments) return 'no_text';
      const sequence = ws.next();
      const ts = `${EPOCH + sequence}.${String(sequence).padStart(6, '0')}`;
      const { token: _secret, ...fields } = p;
      const text = p.text ?? '';
      ws.messages.push({ channel: channel.id, ts, text, fields });
      return {
        channel: channel.id,
        ts,
        message: { type: 'message', subtype: 'bot_message', bot_id: 'B0FAKE0001', text, ts },
      };
    },
  };
}

/** `users.list` and `conversations.list`, cursor-paginated. */
function directoryMethods(ws: Workspace): Record<string, Method> {
  return {
    'users.list': (p) => {
      const page = paginate([...ws.users.values()], p, 'user');
      if (typeof page === 'string') return page;
      return {
        members: page.items.map(userBody),
        cache_ts: EPOCH,
        response_metadata: { next_cursor: page.next },
      };
    },
    'conversations.list': (p) => {
      const types = (p.types ?? 'public_channel').split(',');
      const all = [...ws.channels.values()].filter(
        (c) =>
          types.includes(c.isPrivate ? 'private_channel' : 'public_channel') &&
          !(isTrue(p.exclude_archived) && c.isArchived),
      );
      const page = paginate(all, p, 'channel');
      if (typeof page === 'string') return page;
      return {
        channels: page.items.map(channelBody),
        response_metadata: { next_cursor: page.next },
      };
    },
  };
}

/** `usergroups.list`, `.create`, `.update`, `.users.list`, `.users.update`. */
function usergroupMethods(ws: Workspace): Record<string, Method> {
  const { groups } = ws;
  return {
    'usergroups.list': (p) => ({
      usergroups: [...groups.values()]
        .filter((g) => isTrue(p.include_disabled) || !g.disabled)
        .map((g) => groupBody(g, isTrue(p.include_users), isTrue(p.include_count))),
    }),
    'usergroups.create': (p) => {
      if (!p.name) return 'invalid_name';
      const taken = [...groups.values()];
      if (taken.some((g) => g.name === p.name)) return 'name_already_exists';
      if (p.handle && taken.some((g) => g.handle === p.handle)) return 'handle_already_exists';
      const badChannel = ws.checkChannels(p.channels);
      if (badChannel) return badChannel;
      const id = `S0FAKE${String(ws.next()).padStart(4, '0')}`;
      ws.addGroup({
        id,
        name: p.name,
        handle: p.handle ?? p.name.toLowerCase().replace(/\s+/g, '-'),
        description: p.description ?? '',
        channels: list(p.channels),
      });
      return { usergroup: groupBody(need(groups.get(id)), false, isTrue(p.include_count)) };
    },
    'usergroups.update': (p) => {
      const g = groups.get(p.usergroup ?? '');
      if (!g) return 'no_such_subteam';
      const others = [...groups.values()].filter((o) => o.id !== g.id);
      if (p.name && others.some((o) => o.name === p.name)) return 'name_already_exists';
      if (p.handle && others.some((o) => o.handle === p.handle)) return 'handle_already_exists';
      const badChannel = ws.checkChannels(p.channels);
      if (badChannel) return badChannel;
      const updated = {
        ...g,
        ...(p.name ? { name: p.name } : {}),
        ...(p.handle ? { handle: p.handle } : {}),
        ...(p.description === undefined ? {} : { description: p.description }),
        ...(p.channels === undefined ? {} : { channels: list(p.channels) }),
      };
      groups.set(g.id, updated);
      return { usergroup: groupBody(updated, true, isTrue(p.include_count)) };
    },
    'usergroups.users.list': (p) => {
      const g = groups.get(p.usergroup ?? '');
      if (!g) return 'no_such_subteam';
      if (g.disabled && !isTrue(p.include_disabled)) return 'no_such_subteam';
      return { users: g.users };
    },
    'usergroups.users.update': (p) => {
      const g = groups.get(p.usergroup ?? '');
      if (!g) return 'no_such_subteam';
      // Slack refuses an empty member list (the original works around it with a
      // deactivated user) and unknown user ids alike.
      const ids = list(p.users);
      if (ids.length === 0 || ids.some((id) => !ws.users.has(id))) return 'invalid_users';
      const updated = { ...g, users: [...new Set(ids)] };
      groups.set(g.id, updated);
      return { usergroup: groupBody(updated, true, isTrue(p.include_count)) };
    },
  };
}

/**
 * Slack's cursor pagination: `limit` (absent or 0: everything left), an opaque
 * `cursor` (here, as Slack's look, base64 of `<kind>:<id of the next item>`), and
 * `next_cursor` empty on the last page.
 */
function paginate<T extends { readonly id: string }>(
  all: readonly T[],
  p: Params,
  kind: string,
): { items: T[]; next: string } | string {
  const limit = p.limit === undefined || p.limit === '' ? 0 : Number(p.limit);
  if (!Number.isInteger(limit) || limit < 0) return 'invalid_limit';
  let start = 0;
  if (p.cursor) {
    const decoded = Buffer.from(p.cursor, 'base64').toString('utf8');
    start = decoded.startsWith(`${kind}:`)
      ? all.findIndex((x) => x.id === decoded.slice(kind.length + 1))
      : -1;
    if (start < 0) return 'invalid_cursor';
  }
  const end = limit === 0 ? all.length : Math.min(start + limit, all.length);
  const following = all[end];
  return {
    items: all.slice(start, end),
    next: following ? Buffer.from(`${kind}:${following.id}`).toString('base64') : '',
  };
}

function envelope(result: Result | string): FakeResponse {
  return {
    status: 200,
    body: typeof result === 'string' ? { ok: false, error: result } : { ok: true, ...result },
  };
}

/** WebClient sends form fields; tests may post JSON. Values become strings either way. */
function formFields(body: unknown): Params {
  if (body === null || typeof body !== 'object') return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
}

/** A comma-separated id list (Slack's form for `users` and `channels`). */
function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function isTrue(raw: string | undefined): boolean {
  return raw === 'true' || raw === '1';
}

function need<T>(x: T | undefined): T {
  if (x === undefined) throw new Error('fake-slack: missing object');
  return x;
}

function userBody(u: FakeSlackUser) {
  const realName = u.realName ?? u.name;
  return {
    id: u.id,
    team_id: TEAM,
    name: u.name,
    deleted: u.deleted ?? false,
    real_name: realName,
    tz: 'Etc/UTC',
    is_admin: false,
    is_owner: false,
    is_bot: u.isBot ?? false,
    is_app_user: false,
    updated: EPOCH,
    // `objs_user_profile` requires these keys; Slack sends them empty when unset.
    profile: {
      real_name: realName,
      real_name_normalized: realName,
      display_name: u.name,
      display_name_normalized: u.name,
      avatar_hash: '',
      title: '',
      phone: '',
      skype: '',
      status_text: '',
      status_emoji: '',
      fields: null,
      ...(u.email === undefined ? {} : { email: u.email }),
      team: TEAM,
    },
  };
}

function channelBody(c: FakeSlackChannel) {
  return {
    id: c.id,
    name: c.name,
    name_normalized: c.name,
    created: EPOCH,
    creator: 'U0FAKECREATOR',
    is_channel: !c.isPrivate,
    is_group: c.isPrivate ?? false,
    is_im: false,
    is_mpim: false,
    is_private: c.isPrivate ?? false,
    is_archived: c.isArchived ?? false,
    is_general: false,
    is_shared: false,
    is_org_shared: false,
    topic: { value: '', creator: '', last_set: 0 },
    purpose: { value: '', creator: '', last_set: 0 },
  };
}

function groupBody(g: Required<FakeSlackUsergroup>, withUsers: boolean, withCount: boolean) {
  return {
    id: g.id,
    team_id: TEAM,
    is_usergroup: true,
    is_subteam: true,
    name: g.name,
    description: g.description,
    handle: g.handle,
    is_external: false,
    date_create: EPOCH,
    date_update: EPOCH,
    date_delete: g.disabled ? EPOCH : 0,
    auto_type: null,
    auto_provision: false,
    enterprise_subteam_id: '',
    created_by: 'U0FAKECREATOR',
    updated_by: 'U0FAKECREATOR',
    deleted_by: null,
    prefs: { channels: g.channels, groups: [] },
    ...(withUsers ? { users: g.users } : {}),
    ...(withCount ? { user_count: g.users.length } : {}),
  };
}
