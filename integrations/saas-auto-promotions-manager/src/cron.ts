/**
 * A subscriber's deployment window (`promotion.schedule`): a five-field cron
 * expression matched against the current UTC minute as the original's
 * `croniter.match(schedule, now, day_or=False)` — day of month AND day of
 * week must both match (not cron's usual OR).
 */

const FIELDS: ReadonlyArray<{ min: number; max: number; names?: readonly string[] }> = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  {
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  // 7 is Sunday too, as in cron.
  { min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

/** The values a field allows, or undefined when the field is not valid cron. */
function fieldValues(text: string, field: (typeof FIELDS)[number]): Set<number> | undefined {
  const values = new Set<number>();
  const value = (v: string): number | undefined => {
    const named = field.names?.indexOf(v.toLowerCase()) ?? -1;
    const n = named >= 0 ? named + field.min : /^\d+$/.test(v) ? Number(v) : Number.NaN;
    return n >= field.min && n <= field.max ? n : undefined;
  };
  for (const part of text.split(',')) {
    const m = /^(\*|[^/-]+(?:-[^/-]+)?)(?:\/(\d+))?$/.exec(part);
    if (!m) return undefined;
    const [, range = '', stepText] = m;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) return undefined;
    let from: number | undefined;
    let to: number | undefined;
    if (range === '*') {
      from = field.min;
      to = field.max;
    } else {
      const [a = '', b] = range.split('-');
      from = value(a);
      to = b === undefined ? (stepText === undefined ? from : field.max) : value(b);
    }
    if (from === undefined || to === undefined || from > to) return undefined;
    for (let n = from; n <= to; n += step) values.add(n);
  }
  return values;
}

function parse(schedule: string): Set<number>[] | undefined {
  const parts = schedule.trim().split(/\s+/);
  if (parts.length !== FIELDS.length) return undefined;
  const sets: Set<number>[] = [];
  for (const [i, part] of parts.entries()) {
    const set = fieldValues(part, FIELDS[i] as (typeof FIELDS)[number]);
    if (!set) return undefined;
    sets.push(set);
  }
  return sets;
}

export function isValidCron(schedule: string): boolean {
  return parse(schedule) !== undefined;
}

/** Whether `date`'s UTC minute is in the schedule (false for an invalid one). */
export function cronMatches(schedule: string, date: Date): boolean {
  const sets = parse(schedule);
  if (!sets) return false;
  const [minute, hour, dom, month, dow] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  const day = date.getUTCDay();
  return (
    minute.has(date.getUTCMinutes()) &&
    hour.has(date.getUTCHours()) &&
    dom.has(date.getUTCDate()) &&
    month.has(date.getUTCMonth() + 1) &&
    (dow.has(day) || (day === 0 && dow.has(7)))
  );
}
