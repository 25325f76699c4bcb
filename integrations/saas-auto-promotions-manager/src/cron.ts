import { Cron } from 'croner';

/**
 * A subscriber's deployment window (`promotion.schedule`): a five-field cron
 * expression matched against the current UTC minute, as the original's
 * `croniter.match(schedule, now, day_or=False)`: day of month AND day of week
 * must both match (not classic cron's OR: croner's `domAndDow`).
 */

function parse(schedule: string): Cron | undefined {
  // croner also takes seconds and years (six or seven fields); the original's windows have five.
  if (schedule.trim().split(/\s+/).length !== 5) return undefined;
  try {
    return new Cron(schedule, { timezone: 'UTC', domAndDow: true, paused: true });
  } catch {
    return undefined;
  }
}

export function isValidCron(schedule: string): boolean {
  return parse(schedule) !== undefined;
}

/** Whether `date`'s UTC minute is in the schedule (false for an invalid one). */
export function cronMatches(schedule: string, date: Date): boolean {
  const minute = new Date(date);
  minute.setUTCSeconds(0, 0);
  return parse(schedule)?.match(minute) ?? false;
}
