import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const CONTAINERFILE = new URL('../../../Containerfile', import.meta.url);

describe('the Containerfile', () => {
  it('sets no default of the pod contract in ENV (they are in run-integration)', async () => {
    const text = await readFile(CONTAINERFILE, 'utf8');
    // Instructions with their continuation lines joined, comments dropped.
    const instructions = text
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'))
      .join('\n')
      .replaceAll(/\\\n/g, ' ')
      .split('\n');
    const names = instructions
      .filter((l) => /^ENV\s/i.test(l))
      .flatMap((l) => [...l.slice(4).matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=/g)])
      .map((m) => m[1]);
    // Anything else would reach integrations-manager as an explicit setting of every pod.
    expect(names).toEqual(['PATH']);
  });
});
