import { randomInt } from 'node:crypto';

/**
 * OpenShift's `expression` generator (`generate: expression`, `from: "[a-z0-9]{8}"`),
 * ported rule for rule from library-go `pkg/template/generator/expressionvalue.go`
 * (the code `oc process` runs), quirks included, so a template generates what
 * it generates under `oc`:
 *
 * - only `[...]{n}` groups are generated, 1 ≤ n ≤ 255; everything else is kept literally;
 * - a group holds ranges `x-y` and the classes `\w` (letters, digits, `_`), `\d` (digits),
 *   `\a` (letters and digits — the docs say letters only; the code adds digits) and `\A`
 *   (symbols); a group without any range or class (`[ABC]{3}`) is refused;
 * - a range `x-y` runs over OpenShift's alphabet (a-z, A-Z, 0-9, then the symbols) from the
 *   first `x` up to, but NOT including, `y`: `[0-9]` never yields `9`, `[a-z]` never `z`
 *   (the generator slices `ASCII[left:right]`); a descending range is refused.
 */

/** An integer in [0, n): injectable so that tests are deterministic. */
export type RandomInt = (n: number) => number;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const NUMERALS = '0123456789';
const SYMBOLS = '~!@#$%^&*()-_+={}[]\\|<,>.?/"\';:`';
const ASCII = ALPHABET + NUMERALS + SYMBOLS;

// The three regular expressions of expressionvalue.go, with the same meaning.
const RANGE = /[\\]?[a-zA-Z0-9]-?[a-zA-Z0-9]?/g;
const GENERATOR = /\[([a-zA-Z0-9\-\\]+)\](\{([0-9]+)\})/;
const EXPRESSION = /\[(\\w|\\d|\\a|\\A)|([a-zA-Z0-9]-[a-zA-Z0-9])+\]/;

const MAX_LENGTH = 255;

/** A bad `from` expression; the caller names the template and parameter. */
export class ExpressionError extends Error {}

/** The value `generate: expression` makes of `from`; throws ExpressionError on a bad expression. */
export function generateExpressionValue(from: string, random: RandomInt = randomInt): string {
  let expression = from;
  for (;;) {
    const group = GENERATOR.exec(expression)?.[0];
    if (group === undefined) return expression;
    const { ranges, length } = rangesAndLength(group);
    const alphabet = alphabetOf(ranges, group);
    let generated = '';
    for (let i = 0; i < length; i++) generated += alphabet[random(alphabet.length)];
    // The first occurrence only, as strings.Replace(s, group, result, 1) does.
    expression = expression.replace(group, () => generated);
  }
}

function rangesAndLength(group: string): { ranges: string; length: number } {
  const brace = group.lastIndexOf('{');
  const ranges = group.slice(0, brace);
  if (!EXPRESSION.test(ranges)) throw new ExpressionError(`malformed expression syntax: ${ranges}`);
  const length = Number(group.slice(brace + 1, -1));
  if (length > 0 && length <= MAX_LENGTH) return { ranges, length };
  throw new ExpressionError(`range must be within [1-${MAX_LENGTH}] characters (${length})`);
}

function alphabetOf(ranges: string, group: string): string {
  let alphabet = '';
  for (const [match] of ranges.matchAll(RANGE)) {
    const from = match[0] ?? '';
    const to = match.at(-1) ?? '';
    switch (from + to) {
      case '\\w':
        alphabet += `${ALPHABET}${NUMERALS}_`;
        break;
      case '\\d':
        alphabet += NUMERALS;
        break;
      case '\\a':
        alphabet += ALPHABET + NUMERALS;
        break;
      case '\\A':
        alphabet += SYMBOLS;
        break;
      default: {
        const left = ASCII.indexOf(from);
        const right = ASCII.lastIndexOf(to);
        if (left > right) throw new ExpressionError(`invalid range specified: ${from}-${to}`);
        alphabet += ASCII.slice(left, right);
      }
    }
  }
  const unique = removeDuplicateChars(alphabet);
  // OpenShift panics here (rand.Intn(0)); a clear error is the better failure.
  if (unique === '') throw new ExpressionError(`empty character range in ${group}`);
  return unique;
}

/**
 * Removes repeated characters the way expressionvalue.go does: a duplicate is
 * overwritten by the last character, so the order (and thus which character a
 * random index picks) is OpenShift's, not first-seen order.
 */
export function removeDuplicateChars(input: string): string {
  const data = [...input];
  let last = data.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (data[i] === data[j]) {
        data[j] = data[last] as string;
        data.length = last;
        last--;
        j--;
      }
    }
  }
  return data.join('');
}
