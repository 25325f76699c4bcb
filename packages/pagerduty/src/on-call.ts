import { z } from 'zod';
import type { PagerDutyHttp } from './http.ts';

// The parts of PagerDuty's answers the on-call lookup reads; everything else is ignored.
const renderedSchedule = z.object({
  schedule: z.object({
    final_schedule: z.object({
      rendered_schedule_entries: z.array(
        z.object({
          user: z.object({ id: z.string(), deleted_at: z.string().nullish() }),
        }),
      ),
    }),
  }),
});

const escalationPolicy = z.object({
  escalation_policy: z.object({
    escalation_rules: z.array(
      z.object({
        escalation_delay_in_minutes: z.number(),
        targets: z.array(z.object({ id: z.string(), type: z.string() })),
      }),
    ),
  }),
});

const user = z.object({ id: z.string(), email: z.string() });
const oneUser = z.object({ user });
const userPage = z.object({
  users: z.array(user),
  offset: z.number(),
  more: z.boolean(),
});

/** Users per page when listing them all (PagerDuty's maximum). */
const USERS_PAGE_SIZE = 100;

/** The on-call window the original asks a schedule for: now and the next minute. */
const ON_CALL_WINDOW_MS = 60_000;

/**
 * Who is on call in one PagerDuty account. Like the original, the account's
 * users are listed once (on first need) and kept, and a user missing from that
 * list is fetched by id and kept too.
 */
export class PagerDutyOnCall {
  readonly #http: PagerDutyHttp;
  readonly #emails = new Map<string, string>();
  #listing: Promise<void> | undefined;

  constructor(http: PagerDutyHttp) {
    this.#http = http;
  }

  /** Names on call in a schedule during [now, now + 60 s]; deleted users are left out. */
  async scheduleUsers(scheduleId: string, now: Date): Promise<string[]> {
    const until = new Date(now.getTime() + ON_CALL_WINDOW_MS);
    const { schedule } = await this.#http.get(
      `/schedules/${encodeURIComponent(scheduleId)}`,
      { since: now.toISOString(), until: until.toISOString(), time_zone: 'UTC' },
      renderedSchedule,
    );
    const entries = schedule.final_schedule.rendered_schedule_entries;
    return Promise.all(entries.filter((e) => !e.user.deleted_at).map((e) => this.#name(e.user.id)));
  }

  /**
   * Names reached by an escalation policy: its rules in order, schedules
   * resolved to who is on call, until a rule has found someone and the next
   * escalation is not immediate (`escalation_delay_in_minutes` not 0).
   */
  async escalationPolicyUsers(policyId: string, now: Date): Promise<string[]> {
    const { escalation_policy: policy } = await this.#http.get(
      `/escalation_policies/${encodeURIComponent(policyId)}`,
      {},
      escalationPolicy,
    );
    const names: string[] = [];
    for (const rule of policy.escalation_rules) {
      const found = await Promise.all(
        rule.targets.map(async (target) => {
          if (target.type === 'schedule_reference') return this.scheduleUsers(target.id, now);
          if (target.type === 'user_reference') return [await this.#name(target.id)];
          return [];
        }),
      );
      names.push(...found.flat());
      if (names.length > 0 && rule.escalation_delay_in_minutes !== 0) break;
    }
    return names;
  }

  /** A user's PagerDuty name: the local part of their email. */
  async #name(userId: string): Promise<string> {
    await this.#listAll();
    let email = this.#emails.get(userId);
    if (email === undefined) {
      const answer = await this.#http.get(`/users/${encodeURIComponent(userId)}`, {}, oneUser);
      email = answer.user.email;
      this.#emails.set(userId, email);
    }
    return email.split('@')[0] ?? email;
  }

  #listAll(): Promise<void> {
    // One listing shared by concurrent lookups; a failed one is tried again next time.
    this.#listing ??= this.#fetchAll().catch((e: unknown) => {
      this.#listing = undefined;
      throw e;
    });
    return this.#listing;
  }

  async #fetchAll(): Promise<void> {
    for (let offset = 0; ; ) {
      const page = await this.#http.get(
        '/users',
        { limit: String(USERS_PAGE_SIZE), offset: String(offset) },
        userPage,
      );
      for (const u of page.users) this.#emails.set(u.id, u.email);
      if (!page.more || page.users.length === 0) return;
      offset = page.offset + page.users.length;
    }
  }
}
