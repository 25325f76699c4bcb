import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CONTAINERFILE = new URL('../../../Containerfile', import.meta.url);
const ROOT = dirname(fileURLToPath(CONTAINERFILE));

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

  it("copies into the build stage every file the workspace's tsconfig files extend", async () => {
    const copied = (await instructions())
      .filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l))
      .flatMap((l) => l.trim().split(/\s+/).slice(1, -1))
      .map((source) => source.replace(/\/$/, ''));
    const extended = new Set<string>();
    for (const group of ['packages', 'integrations', 'tools']) {
      for (const dir of await readdir(join(ROOT, group))) {
        for (const file of await readdir(join(ROOT, group, dir)).catch(() => [])) {
          if (!/^tsconfig.*\.json$/.test(file)) continue;
          const text = await readFile(join(ROOT, group, dir, file), 'utf8');
          const target = /"extends":\s*"([^"]+)"/.exec(text)?.[1];
          if (target) extended.add(relative(ROOT, resolve(ROOT, group, dir, target)));
        }
      }
    }
    expect(extended.size).toBeGreaterThan(0);
    // esbuild reads each file's tsconfig chain while bundling; a missing base is an error.
    const missing = [...extended].filter(
      (path) => !copied.some((source) => path === source || path.startsWith(`${source}/`)),
    );
    expect(missing).toEqual([]);
  });

  it('builds on bases given as build arguments, the UBI 9 nodejs-24 images by default', async () => {
    const all = await instructions();
    const firstFrom = all.findIndex((l) => /^FROM\s/i.test(l));
    // Declared before the first FROM: only there can a FROM use them.
    const args = Object.fromEntries(
      all
        .slice(0, firstFrom)
        .filter((l) => /^ARG\s/i.test(l))
        .map((l) => l.slice(4).trim().split('=')),
    );
    expect(args).toEqual({
      BUILD_BASE: 'registry.access.redhat.com/ubi9/nodejs-24:latest',
      RUNTIME_BASE: 'registry.access.redhat.com/ubi9/nodejs-24-minimal:latest',
    });
    const froms = all.filter((l) => /^FROM\s/i.test(l)).map((l) => l.trim().split(/\s+/)[1]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Containerfile's own ${ARG} syntax
    expect(froms).toEqual(['${BUILD_BASE}', '${RUNTIME_BASE}']);
  });

  it("takes tini from the build base only when TINI_FROM_BASE names it (tools/image's Debian base)", async () => {
    const all = await instructions();
    // Empty by default: the release build downloads the pinned release.
    expect(all.filter((l) => /^ARG\s+TINI_FROM_BASE/i.test(l))).toEqual(['ARG TINI_FROM_BASE=']);
    const step = all.find((l) => l.includes('krallin/tini/releases'));
    expect(step).toMatch(
      /^RUN if \[ -n "\$TINI_FROM_BASE" \]; then\s+install -m 755 "\$TINI_FROM_BASE" \/usr\/local\/bin\/tini;\s+else\s/,
    );
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
