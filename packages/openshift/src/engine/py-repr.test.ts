import { describe, expect, it } from 'vitest';
import { pyRepr } from './py-repr.ts';

describe('pyRepr', () => {
  it.each([
    [
      ['apply', 'privileged=False', 'cl', 'ns', 'ConfigMap', 'cm'],
      "['apply', 'privileged=False', 'cl', 'ns', 'ConfigMap', 'cm']",
    ],
    [["it's", 'say "hi"', 'both \' and "'], `["it's", 'say "hi"', 'both \\' and "']`],
    [['a\nb', 'tab\t', '\\'], "['a\\nb', 'tab\\t', '\\\\']"],
    [[true, false, null, 3], '[True, False, None, 3]'],
    [[0.5, 1e-7, '\u00a0\u200b'], "[0.5, 1e-07, '\\xa0\\u200b']"],
    [['resizing_pvcs', 'c', 'ns', new Set(['pvc-a'])], "['resizing_pvcs', 'c', 'ns', {'pvc-a'}]"],
  ])('formats %j like Python', (value, expected) => {
    expect(pyRepr(value)).toBe(expected);
  });
});
