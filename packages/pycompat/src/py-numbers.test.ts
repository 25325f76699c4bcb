import { describe, expect, it } from 'vitest';
import { pyFloatRepr, pyIntRepr, pyNumberRepr } from './py-numbers.ts';

// Expected strings are what CPython prints: repr(float), str(int).
describe('Python number formatting', () => {
  it('pyNumberRepr: safe integers as int, everything else like repr(float)', () => {
    const cases: Array<[number, string]> = [
      [2.5, '2.5'],
      [0.1, '0.1'],
      [-0, '-0.0'],
      [1e-5, '1e-05'],
      [1.5e-7, '1.5e-07'],
      [0.0001, '0.0001'],
      [1.5e16, '1.5e+16'],
      [1.25e300, '1.25e+300'],
      [123456.789, '123456.789'],
      [1e22, '1e+22'],
      [2 ** 53 - 1, '9007199254740991'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
      [1234567890123456.8, '1234567890123456.8'],
      [12345678901234568, '1.2345678901234568e+16'],
      [0.5e-4, '5e-05'],
      [2.5e16 + 0.5, '2.5e+16'],
      [1.1e16 / 3, '3666666666666666.5'],
      [3.3e16 / 1.7, '1.941176470588235e+16'],
    ];
    for (const [n, text] of cases) expect(pyNumberRepr(n)).toBe(text);
  });

  it('pyFloatRepr always writes a float, non-finite values as json or repr does', () => {
    expect(pyFloatRepr(1)).toBe('1.0');
    expect(pyFloatRepr(2 ** 53 + 2)).toBe('9007199254740994.0');
    expect(pyFloatRepr(1e16)).toBe('1e+16');
    expect(pyFloatRepr(0)).toBe('0.0');
    expect(pyFloatRepr(Number.NaN, 'python')).toBe('nan');
    expect(pyFloatRepr(-Infinity, 'python')).toBe('-inf');
  });

  it('pyIntRepr writes exact decimals up to CPython digit limit', () => {
    expect(pyIntRepr(1e20)).toBe('100000000000000000000');
    expect(pyIntRepr(-(10n ** 30n))).toBe('-1000000000000000000000000000000');
    expect(pyIntRepr(10n ** 4299n)).toHaveLength(4300);
    expect(() => pyIntRepr(10n ** 4300n)).toThrow('Exceeds the limit (4300 digits)');
  });
});
