import { type FakeRequest, type FakeResponse, type HttpFake, startHttpFake } from './http-fake.ts';

/** A PagerDuty user; the local part of `email` is the name app-interface matches. */
export interface FakePagerDutyUser {
  readonly id: string;
  readonly email: string;
  readonly name?: string;
}

/** A stretch of on-call time in a schedule; open ends when `start` or `end` is absent. */
interface FakePagerDutyShift {
  readonly user: string;
  /** ISO 8601; absent: on call since forever. */
  readonly start?: string;
  /** ISO 8601; absent: on call for good. */
  readonly end?: string;
}

export interface FakePagerDutySchedule {
  readonly id: string;
  readonly name?: string;
  /** Who is on call: user ids (always on call) or shifts. */
  readonly onCall: ReadonlyArray<string | FakePagerDutyShift>;
}

interface FakePagerDutyEscalationRule {
  readonly delayMinutes: number;
  readonly targets: ReadonlyArray<{ readonly type: 'schedule' | 'user'; readonly id: string }>;
}

export interface FakePagerDutyEscalationPolicy {
  readonly id: string;
  readonly name?: string;
  readonly rules: readonly FakePagerDutyEscalationRule[];
}

export interface FakePagerDuty extends HttpFake {
  /** The token the fake accepts (`Authorization: Token token=<token>`). */
  readonly token: string;
  addUser(user: FakePagerDutyUser): void;
  /**
   * Deletes a user as PagerDuty does: gone from `/users`, 404 by id, and shown
   * with `deleted_at` in the schedules they were on.
   */
  deleteUser(id: string): void;
  /** Adds or replaces a schedule. */
  addSchedule(schedule: FakePagerDutySchedule): void;
  /** Adds or replaces an escalation policy. */
  addEscalationPolicy(policy: FakePagerDutyEscalationPolicy): void;
  /**
   * The next `times` requests (default 1) matching `path` (default: every
   * path) are answered 429 as PagerDuty does: its error body and the
   * `ratelimit-*` headers, `ratelimit-reset` = `resetSeconds` (default 1).
   */
  rateLimit(options?: { path?: string | RegExp; times?: number; resetSeconds?: number }): void;
}

/** PagerDuty's page size when none is asked for, and the largest it gives. */
const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;
/** Without `until`, PagerDuty renders two weeks of a schedule. */
const DEFAULT_RENDER_MS = 14 * 24 * 3600 * 1000;

// Where the web UI lives; `html_url` points there, as in PagerDuty's answers. `self`, the
// object's URL in the API, points at the fake itself, as PagerDuty's at the API that answered.
const WEB = 'https://acme.pagerduty.com';

/**
 * The parts of PagerDuty's REST API v2 that on-call lookups use, with its JSON
 * shapes: `GET /users` (classic `limit`/`offset`/`more`/`total` pagination),
 * `GET /users/{id}`, `GET /schedules/{id}?since=&until=` (the final schedule
 * rendered for the window), `GET /escalation_policies/{id}`; token auth (401),
 * PagerDuty's error bodies (`{error: {message, code}}`), and the shared
 * request log, latency and fault injection of `startHttpFake`.
 */
export async function startFakePagerDuty(
  options: {
    token?: string;
    users?: readonly FakePagerDutyUser[];
    schedules?: readonly FakePagerDutySchedule[];
    escalationPolicies?: readonly FakePagerDutyEscalationPolicy[];
    latencyMs?: number;
    /** A fixed port (the demo); a free one when absent. */
    port?: number;
  } = {},
): Promise<FakePagerDuty> {
  const token = options.token ?? 'pd_fake_token';
  const users = new Map<string, FakePagerDutyUser>();
  const deleted = new Map<string, { user: FakePagerDutyUser; at: string }>();
  const schedules = new Map<string, FakePagerDutySchedule>();
  const policies = new Map<string, FakePagerDutyEscalationPolicy>();
  for (const u of options.users ?? []) users.set(u.id, u);
  for (const s of options.schedules ?? []) schedules.set(s.id, s);
  for (const p of options.escalationPolicies ?? []) policies.set(p.id, p);
  // The fake's URL, known once it listens (before any request).
  let api = '';

  const userReference = (id: string) => {
    const live = users.get(id);
    const gone = deleted.get(id);
    const user = live ?? gone?.user;
    return {
      id,
      type: 'user_reference',
      summary: user?.name ?? user?.email ?? id,
      self: `${api}/users/${id}`,
      html_url: `${WEB}/users/${id}`,
      ...(gone && !live ? { deleted_at: gone.at } : {}),
    };
  };

  const handle = (req: FakeRequest): FakeResponse => {
    if (req.headers.authorization !== `Token token=${token}`) {
      return error(401, 'Unauthorized', 2006);
    }
    if (req.method !== 'GET') return error(404, 'Not Found', 2100);
    const path = req.url.pathname;
    const query = req.url.searchParams;
    if (path === '/users') return listUsers(query);
    let m = /^\/users\/([^/]+)$/.exec(path);
    if (m) {
      const user = users.get(decodeURIComponent(m[1] ?? ''));
      return user ? ok({ user: userBody(user, api) }) : error(404, 'Not Found', 2100);
    }
    m = /^\/schedules\/([^/]+)$/.exec(path);
    if (m) {
      const schedule = schedules.get(decodeURIComponent(m[1] ?? ''));
      return schedule ? renderSchedule(schedule, query) : error(404, 'Not Found', 2100);
    }
    m = /^\/escalation_policies\/([^/]+)$/.exec(path);
    if (m) {
      const policy = policies.get(decodeURIComponent(m[1] ?? ''));
      return policy ? ok({ escalation_policy: policyBody(policy) }) : error(404, 'Not Found', 2100);
    }
    return error(404, 'Not Found', 2100);
  };

  const listUsers = (query: URLSearchParams): FakeResponse => {
    const limit = Math.min(intParam(query, 'limit') ?? DEFAULT_LIMIT, MAX_LIMIT);
    const offset = intParam(query, 'offset') ?? 0;
    if (Number.isNaN(limit) || Number.isNaN(offset) || limit < 1 || offset < 0) {
      return error(400, 'Invalid Input Provided', 2001, ['limit and offset must be integers']);
    }
    const q = query.get('query')?.toLowerCase();
    const all = [...users.values()].filter(
      (u) => !q || u.email.toLowerCase().includes(q) || (u.name ?? '').toLowerCase().includes(q),
    );
    return ok({
      users: all.slice(offset, offset + limit).map((u) => userBody(u, api)),
      limit,
      offset,
      more: offset + limit < all.length,
      total: query.get('total') === 'true' ? all.length : null,
    });
  };

  const renderSchedule = (schedule: FakePagerDutySchedule, query: URLSearchParams) => {
    const since = query.has('since') ? Date.parse(query.get('since') ?? '') : Date.now();
    const until = query.has('until')
      ? Date.parse(query.get('until') ?? '')
      : since + DEFAULT_RENDER_MS;
    if (Number.isNaN(since) || Number.isNaN(until)) {
      return error(400, "Invalid 'since' or 'until' Parameter Values", 2004);
    }
    if (until < since) return error(400, 'Invalid Query Date Range', 2005);
    const entries = schedule.onCall
      .map((s) => (typeof s === 'string' ? { user: s } : s))
      .map((s) => ({
        user: s.user,
        start: Math.max(s.start === undefined ? since : Date.parse(s.start), since),
        end: Math.min(s.end === undefined ? until : Date.parse(s.end), until),
      }))
      .filter((s) => s.start < s.end)
      .map((s) => ({
        start: new Date(s.start).toISOString(),
        end: new Date(s.end).toISOString(),
        user: userReference(s.user),
      }));
    const name = schedule.name ?? schedule.id;
    return ok({
      schedule: {
        id: schedule.id,
        type: 'schedule',
        summary: name,
        self: `${api}/schedules/${schedule.id}`,
        html_url: `${WEB}/schedules/${schedule.id}`,
        name,
        time_zone: query.get('time_zone') ?? 'UTC',
        description: null,
        escalation_policies: [],
        users: [...new Set(entries.map((e) => e.user.id))].map(userReference),
        schedule_layers: [],
        final_schedule: {
          name: 'Final Schedule',
          rendered_schedule_entries: entries,
          rendered_coverage_percentage: entries.length ? 100 : 0,
        },
      },
    });
  };

  const policyBody = (policy: FakePagerDutyEscalationPolicy) => {
    const name = policy.name ?? policy.id;
    return {
      id: policy.id,
      type: 'escalation_policy',
      summary: name,
      self: `${api}/escalation_policies/${policy.id}`,
      html_url: `${WEB}/escalation_policies/${policy.id}`,
      name,
      description: '',
      num_loops: 0,
      on_call_handoff_notifications: 'if_has_services',
      escalation_rules: policy.rules.map((rule, n) => ({
        id: `${policy.id}R${n + 1}`,
        escalation_delay_in_minutes: rule.delayMinutes,
        targets: rule.targets.map((t) =>
          t.type === 'user'
            ? userReference(t.id)
            : {
                id: t.id,
                type: 'schedule_reference',
                summary: schedules.get(t.id)?.name ?? t.id,
                self: `${api}/schedules/${t.id}`,
                html_url: `${WEB}/schedules/${t.id}`,
              },
        ),
      })),
      services: [],
      teams: [],
    };
  };

  const http = await startHttpFake({
    handle,
    ...(options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs }),
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  api = http.url;
  return Object.assign(http, {
    token,
    addUser: (user: FakePagerDutyUser) => {
      users.set(user.id, user);
      deleted.delete(user.id);
    },
    deleteUser: (id: string) => {
      const user = users.get(id);
      if (!user) return;
      users.delete(id);
      deleted.set(id, { user, at: new Date().toISOString() });
    },
    addSchedule: (schedule: FakePagerDutySchedule) => {
      schedules.set(schedule.id, schedule);
    },
    addEscalationPolicy: (policy: FakePagerDutyEscalationPolicy) => {
      policies.set(policy.id, policy);
    },
    rateLimit: (o: { path?: string | RegExp; times?: number; resetSeconds?: number } = {}) => {
      http.faults.add({
        ...(o.path === undefined ? {} : { path: o.path }),
        status: 429,
        times: o.times ?? 1,
        headers: {
          'ratelimit-limit': '960',
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(o.resetSeconds ?? 1),
        },
        body: { error: { message: 'Rate Limit Exceeded', code: 2020 } },
      });
    },
  });
}

function userBody(user: FakePagerDutyUser, api: string) {
  const name = user.name ?? user.email.split('@')[0] ?? user.email;
  return {
    id: user.id,
    type: 'user',
    summary: name,
    self: `${api}/users/${user.id}`,
    html_url: `${WEB}/users/${user.id}`,
    name,
    email: user.email,
    time_zone: 'Etc/UTC',
    color: 'purple',
    role: 'user',
    avatar_url: `${WEB}/avatars/${user.id}.png`,
    description: null,
    invitation_sent: false,
    job_title: null,
    teams: [],
    contact_methods: [],
    notification_rules: [],
  };
}

function ok(body: unknown): FakeResponse {
  return { status: 200, body };
}

function error(status: number, message: string, code: number, errors?: string[]): FakeResponse {
  return { status, body: { error: { message, code, ...(errors ? { errors } : {}) } } };
}

/** An integer query parameter; NaN when present but not an integer. */
function intParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  return /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
}
