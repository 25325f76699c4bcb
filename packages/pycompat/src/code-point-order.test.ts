import { describe, expect, it } from 'vitest';
import { compareCodePoints } from './code-point-order.ts';

// Python: sorted(['\U0001F600', '\uff01', 'b', 'a', 'B']) == ['B', 'a', 'b', '\uff01', '\U0001F600']
describe('compareCodePoints (Python str ordering)', () => {
  it('orders astral characters after U+E000..U+FFFF, unlike UTF-16 order', () => {
    const list = ['\u{1F600}', '\uFF01', 'b', 'a', 'B'];
    expect([...list].sort(compareCodePoints)).toEqual(['B', 'a', 'b', '\uFF01', '\u{1F600}']);
    expect(compareCodePoints('\uff01', '😀')).toBeLessThan(0);
    expect(compareCodePoints('/a/b.yml', '/a-b.yml')).toBeGreaterThan(0);
  });

  it('orders prefixes first and equal strings as equal', () => {
    expect(compareCodePoints('same', 'same')).toBe(0);
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
  });

  it('keeps a lone surrogate at its own code point, as Python does', () => {
    // '\ud800' < '\ue000' < '\U00010000' in Python.
    expect(compareCodePoints('\ud800', '\ue000')).toBeLessThan(0);
    expect(compareCodePoints('\ue000', '\u{10000}')).toBeLessThan(0);
    expect(compareCodePoints('\udc00', '\u{10000}')).toBeLessThan(0);
    // A lone high surrogate followed by a pair, against the pair alone: [0xd800, 0x10000] < [0x10000].
    expect(compareCodePoints('\ud800\ud800\udc00', '\ud800\udc00')).toBeLessThan(0);
  });

  it('agrees with comparing code point arrays', () => {
    const alphabet = [
      'a',
      '\udc00',
      'Z',
      '\u00e9',
      '\ud7ff',
      '\ue000',
      '\uffff',
      '\u{10000}',
      '\u{1F600}',
      '\ud800',
    ];
    const codePoints = (s: string) => Array.from(s, (c) => c.codePointAt(0) ?? 0);
    const byArrays = (a: string, b: string) => {
      const x = codePoints(a);
      const y = codePoints(b);
      for (let i = 0; i < Math.min(x.length, y.length); i++)
        if (x[i] !== y[i]) return x[i]! - y[i]!;
      return x.length - y.length;
    };
    for (const a of alphabet) {
      for (const b of alphabet) {
        for (const c of alphabet) {
          const s = a + b;
          const t = a + c;
          expect(Math.sign(compareCodePoints(s, t))).toBe(Math.sign(byArrays(s, t)));
          expect(Math.sign(compareCodePoints(b, s))).toBe(Math.sign(byArrays(b, s)));
        }
      }
    }
  });
});
