import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.ts';

describe('deepFreeze', () => {
  it('freezes an object, its arrays and everything below, and returns it', () => {
    const value = { a: { b: [{ c: 1 }] }, d: 'x' };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[0])).toBe(true);
    expect(() => {
      (value.a.b[0] as { c: number }).c = 2;
    }).toThrow(TypeError);
  });

  it('passes scalars and null through', () => {
    expect(deepFreeze(null)).toBe(null);
    expect(deepFreeze('s')).toBe('s');
    expect(deepFreeze(1)).toBe(1);
  });
});
