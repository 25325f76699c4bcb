import { describe, expect, it } from 'vitest';
import { intern, internSlice, internValues } from './intern.ts';

describe('intern', () => {
  it('returns the value it is given, short or long, however many strings it has seen', () => {
    const long = 'y'.repeat(65);
    expect(intern(long)).toBe(long);
    // More distinct strings than the table holds: it starts over, values stay right.
    const wrong: string[] = [];
    for (let i = 0; i < 250_000; i++) if (intern(`name-${i}`) !== `name-${i}`) wrong.push(`${i}`);
    expect(wrong).toEqual([]);
    expect(intern(['Config', 'Map'].join(''))).toBe('ConfigMap');
    expect(internSlice('kind: ConfigMap'.slice(6))).toBe('ConfigMap');
    expect(internSlice(long.slice(1))).toBe('y'.repeat(64));
    expect(intern('z'.repeat(48))).toBe('z'.repeat(48));
  });

  it('interns the string values of a record in place and leaves the others', () => {
    const record: Record<string, unknown> = { a: 'x', b: 1, c: null, d: { e: 'f' } };
    internValues(record);
    expect(record).toEqual({ a: 'x', b: 1, c: null, d: { e: 'f' } });
  });
});
