import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pyYamlSafeLoad } from '../parse-resource.ts';
import { pyJsonDumps } from '../py-json.ts';

interface Vector {
  text: string;
  json?: string;
  loadError?: string;
  dumpError?: string;
}

// Outcomes of PyYAML 6.0.3 on mutated documents, recorded with the library itself.
const { cases } = JSON.parse(
  readFileSync(new URL('./pyyaml-vectors.json', import.meta.url), 'utf8'),
) as {
  cases: Vector[];
};

describe('PyYAML 6.0.3 vectors', () => {
  it.each(cases.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
    if (c.loadError !== undefined) {
      expect(() => pyYamlSafeLoad(c.text)).toThrow();
      return;
    }
    const value = pyYamlSafeLoad(c.text);
    if (c.dumpError !== undefined) expect(() => pyJsonDumps(value)).toThrow();
    else expect(pyJsonDumps(value)).toBe(c.json);
  });
});
