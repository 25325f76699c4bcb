import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const CONTAINERFILE = new URL('../../../Containerfile', import.meta.url);

/** The Containerfile's instructions, continuation lines joined and comments dropped. */
async function instructions(): Promise<string[]> {
  const text = await readFile(CONTAINERFILE, 'utf8');
  return text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n')
    .replaceAll(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** The instructions of the last stage: what the image runs. */
async function runtimeStage(): Promise<string[]> {
  const all = await instructions();
  const from = all.findLastIndex((l) => /^FROM\s/i.test(l));
  return all.slice(from);
}

/** The exec form (JSON array) of an instruction, e.g. `ENTRYPOINT ["a", "b"]`. */
function execForm(stage: readonly string[], instruction: string): unknown {
  const line = stage.findLast((l) => new RegExp(`^${instruction}\\s`, 'i').test(l));
  if (!line) return undefined;
  return JSON.parse(line.slice(instruction.length).trim());
}

describe('the Containerfile', () => {
  it('sets no default of the pod contract in ENV (they are in run-integration)', async () => {
    const names = (await instructions())
      .filter((l) => /^ENV\s/i.test(l))
      .flatMap((l) => [...l.slice(4).matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=/g)])
      .map((m) => m[1]);
    // Anything else would reach integrations-manager as an explicit setting of every pod.
    expect(names).toEqual(['PATH']);
  });

  it('runs run-integration under tini as PID 1, a binary checked against a pinned checksum', async () => {
    const stage = await runtimeStage();
    const entrypoint = execForm(stage, 'ENTRYPOINT') as string[];
    // Exec form, so tini itself is PID 1 (a shell form would make /bin/sh PID 1).
    expect(entrypoint).toEqual([expect.stringMatching(/\/tini$/), '--']);
    expect(execForm(stage, 'CMD')).toEqual(['run-integration']);
    const tini = entrypoint[0]!;
    // The runtime stage holds the binary at that path...
    expect(stage.some((l) => new RegExp(`^COPY\\s.*\\s${tini}$`).test(l.trim()))).toBe(true);
    // ...fetched in the build stage and verified before it is used.
    const fetch = (await instructions()).find((l) => l.includes('krallin/tini/releases'));
    expect(fetch).toMatch(new RegExp(`curl .*-o ${tini} .*sha256sum -c`));
    const pins = (await instructions()).filter((l) => /^ARG\s+TINI_SHA256_/i.test(l));
    expect(pins.map((l) => l.split('=')[1])).toEqual([
      expect.stringMatching(/^[0-9a-f]{64}$/),
      expect.stringMatching(/^[0-9a-f]{64}$/),
    ]);
  });
});
