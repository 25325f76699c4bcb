import { describe, expect, it } from 'vitest';
import { generateExpressionValue, removeDuplicateChars } from './expression.ts';

// Source of every rule: openshift/library-go pkg/template/generator/expressionvalue.go
// (and its expressionvalue_test.go, whose cases are mirrored here with a
// deterministic random source instead of Go's seeded math/rand).

const first = () => 0;
const last = (n: number) => n - 1;
/** Cycles through the alphabet: 0, 1, 2, ... (mod n). */
const counter = () => {
  let i = 0;
  return (n: number) => i++ % n;
};

describe('generateExpressionValue', () => {
  it.each([
    // [from, random, expected, the rule]
    ['[a-zA-Z0-9]{8}', first, 'aaaaaaaa', 'the documented example: 8 characters of the ranges'],
    ['test[0-9]{1}x', first, 'test0x', 'text around a group is kept'],
    ['0x[A-F0-9]{4}', counter(), '0xABCD', 'ranges are concatenated in order: A-F first'],
    // ASCII[left:right] leaves the upper bound out: OpenShift never generates it.
    ['[0-9]{3}', last, '888', '`[0-9]` stops before 9'],
    ['[a-z]{2}', last, 'yy', '`[a-z]` stops before z'],
    ['[a-zA-Z0-9]{1}', last, '8', 'the last range ends before its bound, too'],
    ['[\\d]{10}', counter(), '0123456789', '\\d: the ten digits'],
    ['[\\w]{1}', last, '_', '\\w: letters, digits and _'],
    ['[\\a]{1}', last, '9', '\\a: letters and digits (the code; the docs say letters)'],
    ['[\\A]{3}', counter(), '~!@', '\\A: the symbols, in OpenShift order'],
    ['admin[0-9]{2}test[A-Z]{2}', first, 'admin00testAA', 'every group is generated'],
    ['strongPassword[\\w]{3}[\\A]{3}', first, 'strongPasswordaaa~~~', 'classes in sequence'],
    ['[a-c]{4}[a-c]{4}', counter(), 'abababab', 'equal groups: the first occurrence each time'],
    ['no-groups', first, 'no-groups', 'nothing to generate: the text as is'],
    ['[a-z]', first, '[a-z]', 'a group without {n} is literal'],
  ] as const)('%s → %s (%s)', (from, random, expected, _rule) => {
    expect(generateExpressionValue(from, random)).toBe(expected);
  });

  it('draws from the whole range with the default (crypto) source', () => {
    const value = generateExpressionValue('[a-zA-Z0-9]{255}');
    expect(value).toMatch(/^[a-yA-Y0-8]{255}$/);
  });

  it.each([
    ['[ABC]{3}', 'malformed expression syntax: [ABC]', 'a group needs a range or a class'],
    ['[Z-A]{3}', 'invalid range specified: Z-A', 'a descending range'],
    ['[A-Z]{300}', 'range must be within [1-255] characters (300)', 'at most 255'],
    ['[A-Z]{0}', 'range must be within [1-255] characters (0)', 'at least 1'],
    ['[a-a]{2}', 'empty character range in [a-a]{2}', 'an empty alphabet (OpenShift panics)'],
  ])('%s is refused: %s (%s)', (from, message, _rule) => {
    expect(() => generateExpressionValue(from, first)).toThrow(message);
  });
});

describe('removeDuplicateChars', () => {
  // The cases of TestRemoveDuplicatedCharacters: a duplicate is overwritten by the last char.
  it.each([
    ['abcdefgh', 'abcdefgh'],
    ['abcabc', 'abc'],
    ['1111111', '1'],
    ['1234567890', '1234567890'],
    ['test@@', 'tes@'],
  ])('%s → %s', (input, expected) => {
    expect(removeDuplicateChars(input)).toBe(expected);
  });
});
