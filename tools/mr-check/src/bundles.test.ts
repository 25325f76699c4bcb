import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeBundleFile } from '@qontract/app-interface';
import { QontractError } from '@qontract/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildBundle, buildBundlePair, checkBundle } from './bundles.ts';

const EXAMPLE = resolve(import.meta.dirname, '../../../examples/app-interface');

async function edit(path: string, from: string | RegExp, to: string): Promise<void> {
  await writeFile(path, (await readFile(path, 'utf8')).replace(from, to));
}

describe('checkBundle', () => {
  it('reports every problem of a tree with its file, and the line where it can be found', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mr-check-bundle-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await cp(EXAMPLE, dir, { recursive: true });
    await edit(join(dir, 'data/access/users/dave.yml'), /$/, '  bad: [unclosed\n');
    await edit(join(dir, 'data/access/users/alice.yml'), /^name: .*$/m, 'name: 12');
    await edit(
      join(dir, 'data/services/example-app/namespaces/example-app-stage.yml'),
      '$ref: /openshift/appint-ex-01/cluster.yml',
      '$ref: /openshift/nope/cluster.yml',
    );
    const checked = await checkBundle(dir, true);
    const alice = (await readFile(join(dir, 'data/access/users/alice.yml'), 'utf8')).split('\n');
    const stage = (
      await readFile(
        join(dir, 'data/services/example-app/namespaces/example-app-stage.yml'),
        'utf8',
      )
    ).split('\n');
    expect(checked.problems).toEqual([
      {
        file: '/access/users/alice.yml',
        kind: 'SCHEMA',
        reason: 'schema /access/user-1.yml: /name must be string',
        line: alice.indexOf('name: 12') + 1,
      },
      {
        file: '/access/users/dave.yml',
        kind: 'PARSE',
        reason: expect.stringMatching(/^invalid YAML at line \d+/),
      },
      {
        file: '/services/example-app/namespaces/example-app-stage.yml',
        kind: 'REF',
        reason: 'cluster: $ref /openshift/nope/cluster.yml does not exist',
        line: stage.findIndex((l) => l.includes('/openshift/nope/cluster.yml')) + 1,
      },
    ]);
  });

  it('lists a data file naming an unknown $schema before the references that fail because of it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mr-check-bundle-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await cp(EXAMPLE, dir, { recursive: true });
    await edit(
      join(dir, 'data/openshift/appint-ex-01/cluster.yml'),
      '$schema: /openshift/cluster-1.yml',
      '$schema: /openshift/cluster-9.yml',
    );
    const { problems } = await checkBundle(dir, true);
    expect(problems[0]).toMatchObject({
      file: '/openshift/appint-ex-01/cluster.yml',
      reason: 'schema /openshift/cluster-9.yml not found',
    });
    const rest = problems.slice(1).map((p) => p.reason);
    expect(rest.length).toBeGreaterThan(1);
    expect(rest.filter((r) => r.includes('/cluster-9.yml (not found), expected'))).toHaveLength(
      rest.length,
    );
  });

  it('builds a valid tree with its sha and no problems', async () => {
    const checked = await checkBundle(EXAMPLE, true);
    expect(checked.problems).toEqual([]);
    expect(checked.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('buildBundlePair', () => {
  async function tree(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'mr-check-pair-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await cp(EXAMPLE, dir, { recursive: true });
    return dir;
  }

  it('builds two directories as each is built on its own', async () => {
    const head = await tree();
    await edit(join(head, 'data/access/users/dave.yml'), /$/, '  bad: [unclosed\n');
    await edit(join(head, 'data/access/users/alice.yml'), /^name: .*$/m, 'name: Alice B');
    const pair = await buildBundlePair(EXAMPLE, head);
    expect(pair.base).toEqual(await buildBundle(EXAMPLE));
    expect(pair.head).toEqual(await buildBundle(head));
    expect(pair.head.problems.map((p) => p.file)).toEqual(['/access/users/dave.yml']);
    expect(pair.head.sha256).not.toBe(pair.base.sha256);
  });

  it('reads a bundle.json on either side', async () => {
    const dir = await tree();
    const json = join(dir, 'bundle.json');
    const written = await writeBundleFile(json, (await buildBundle(EXAMPLE)).bundle!);
    const pair = await buildBundlePair(json, EXAMPLE);
    expect(pair.base).toMatchObject({ source: json, sha256: written.sha256, unloaded: null });
    expect(pair.head).toEqual(await buildBundle(EXAMPLE));
    const reversed = await buildBundlePair(EXAMPLE, json);
    expect(reversed.head).toMatchObject({ source: json, sha256: written.sha256, problems: [] });
  });

  it('names a path that does not exist', async () => {
    const missing = join(await tree(), 'nope');
    for (const [base, head] of [
      [missing, EXAMPLE],
      [EXAMPLE, missing],
    ]) {
      const failure = buildBundlePair(base!, head!);
      await expect(failure).rejects.toThrow(QontractError);
      await expect(failure).rejects.toThrow(`${missing}: no such file or directory`);
    }
  });
});
