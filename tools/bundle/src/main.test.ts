import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.ts';
import { BASIC_TREE, Capture, writeTree } from './test-support/capture.ts';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function run(...argv: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const SCHEMA_YML = `
confs:
- name: Query
  fields:
  - { name: things_v1, type: Thing_v1, isList: true, datafileSchema: /thing-1.yml }
- name: Thing_v1
  datafile: /thing-1.yml
  fields:
  - { name: name, type: string, isRequired: true }
  - { name: other, type: Thing_v1 }
`;

describe('qontract-bundle build', () => {
  it('writes a sorted, compact bundle whose sha it reports', async () => {
    const out = await writeTree({});
    roots.push(out);
    const file = join(out, 'bundle.json');
    const r = await run('build', BASIC_TREE, '-o', file, '--no-git');
    expect(r.code).toBe(0);
    const text = await readFile(file, 'utf8');
    const sha = createHash('sha256').update(text).digest('hex');
    expect(r.stderr).toContain(`bundle ${sha}: 15 data files, 3 resources, 0 schemas`);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.slice(0, 9)).toBe('{"data":{');
    const bundle = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(bundle)).toEqual(['data', 'graphql', 'resources', 'schemas']);
  });

  it('writes to stdout without -o', async () => {
    const r = await run('build', BASIC_TREE, '--no-git');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty(['resources', '/app-a/notes.txt', 'sha256sum']);
  });
});

describe('qontract-bundle validate', () => {
  it('passes a valid tree and a built bundle', async () => {
    const r = await run('validate', BASIC_TREE);
    expect(r).toMatchObject({ code: 0, stdout: 'OK: 15 data files, no problems\n' });
  });

  it('lists every problem with file and reason and exits 1', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': SCHEMA_YML,
      'schemas/metaschema-1.json': '{"$schema": "http://json-schema.org/draft-06/schema"}',
      'schemas/thing-1.yml':
        '$schema: /metaschema-1.json\ntype: object\nproperties:\n  name: {type: string}\n  $schema: {type: string}\n  other: {type: object}\nadditionalProperties: false\n',
      'data/bad.yml': 'name: [x\n',
      'data/no-schema.yml': 'name: x\n',
      'data/dangling.yml': '$schema: /thing-1.yml\nname: d\nother: {$ref: /missing.yml}\n',
      'data/invalid.yml': '$schema: /thing-1.yml\nname: 5\n',
    });
    roots.push(root);
    const r = await run('validate', root);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^ERROR PARSE \/bad\.yml: invalid YAML at line/),
      'ERROR REF /dangling.yml: other: $ref /missing.yml does not exist',
      'ERROR SCHEMA /invalid.yml: schema /thing-1.yml: /name must be string',
      'ERROR FILE /no-schema.yml: the data file has no $schema',
      '4 problems found',
    ]);
    const json = await run('validate', root, '--json');
    expect(JSON.parse(json.stdout)).toHaveLength(4);
  });

  it('lists a data file naming an unknown $schema before the $schemaRefs that fail because of it', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': SCHEMA_YML,
      'schemas/metaschema-1.json': '{"$schema": "http://json-schema.org/draft-06/schema"}',
      'schemas/thing-1.yml':
        '$schema: /metaschema-1.json\ntype: object\nproperties:\n  other: {type: object, $schemaRef: /thing-1.yml}\n',
      'data/a.yml': '$schema: /thing-1.yml\nname: a\nother: {$ref: /z.yml}\n',
      'data/b.yml': '$schema: /thing-1.yml\nname: b\nother: {$ref: /z.yml}\n',
      'data/z.yml': '$schema: /thing-2.yml\nname: z\n',
    });
    roots.push(root);
    const r = await run('validate', root);
    expect(r.stdout.trim().split('\n')).toEqual([
      'ERROR SCHEMA /z.yml: schema /thing-2.yml not found',
      'ERROR SCHEMA /a.yml: schema /thing-1.yml: /other $ref /z.yml has $schema /thing-2.yml (not found), expected /thing-1.yml',
      'ERROR SCHEMA /b.yml: schema /thing-1.yml: /other $ref /z.yml has $schema /thing-2.yml (not found), expected /thing-1.yml',
      '3 problems found',
    ]);
  });

  it('fails build on unreadable files but not on validation problems', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': SCHEMA_YML,
      'data/dangling.yml': '$schema: /thing-1.yml\nname: d\nother: {$ref: /missing.yml}\n',
    });
    roots.push(root);
    expect((await run('build', root, '--no-git')).code).toBe(0);
    const broken = await writeTree({ 'graphql-schemas/schema.yml': SCHEMA_YML, 'data/x.yml': '' });
    roots.push(broken);
    const r = await run('build', broken, '--no-git');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('/x.yml: the file holds no YAML document');
  });
});

describe('qontract-bundle serve', () => {
  it('serves a tree over HTTP until stopped', async () => {
    const stop = new AbortController();
    const stdout = new Capture();
    let url = '';
    const done = main(['serve', BASIC_TREE, '--port', '0', '--no-git'], {
      stdout,
      stderr: new Capture(),
      signal: stop.signal,
      onListening: (u) => {
        url = u;
      },
    });
    await expect.poll(() => url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stdout.text).toMatch(
      /^serving bundle [0-9a-f]{64} on http:\/\/127\.0\.0\.1:\d+ \(port \d+\)\n$/,
    );
    const sha = await (await fetch(`${url}/sha256`)).text();
    const r = await fetch(`${url}/graphqlsha/${sha}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ clusters_v1 { name } }' }),
    });
    expect(await r.json()).toEqual({
      data: { clusters_v1: [{ name: 'prod-1' }, { name: 'stage-1' }] },
      extensions: { schemas: ['/openshift/cluster-1.yml'] },
    });
    stop.abort();
    expect(await done).toBe(0);
  });
});

describe('qontract-bundle serve BASE HEAD', () => {
  it("serves both bundles by sha, HEAD as the current one, and qontract-server's /diff", async () => {
    const tree = (name: string) => ({
      'graphql-schemas/schema.yml': SCHEMA_YML,
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
      'data/b.yml': `$schema: /thing-1.yml\nname: ${name}\n`,
    });
    const base = await writeTree(tree('b'));
    const head = await writeTree(tree('b2'));
    roots.push(base, head);
    const stop = new AbortController();
    const stdout = new Capture();
    let url = '';
    const done = main(['serve', base, head, '--port', '0', '--no-git'], {
      stdout,
      stderr: new Capture(),
      signal: stop.signal,
      onListening: (u) => {
        url = u;
      },
    });
    await expect.poll(() => url).toMatch(/^http:/);
    const [, baseSha] = /^loaded bundle ([0-9a-f]{64})\n/.exec(stdout.text) ?? [];
    const headSha = await (await fetch(`${url}/sha256`)).text();
    expect(baseSha).toBeDefined();
    expect(headSha).not.toBe(baseSha);
    const diff = await (await fetch(`${url}/diff/${baseSha}/${headSha}`)).json();
    const fileSha = (text: string) => createHash('sha256').update(text).digest('hex');
    const sha = (i: number) => fileSha(tree(['b', 'b2'][i]!)['data/b.yml']);
    expect(diff).toEqual({
      datafiles: {
        '/b.yml': {
          datafilepath: '/b.yml',
          datafileschema: '/thing-1.yml',
          // qontract-server serves the bundle's data as it is, with the file's sha.
          old: { $schema: '/thing-1.yml', name: 'b', path: '/b.yml', $file_sha256sum: sha(0) },
          new: { $schema: '/thing-1.yml', name: 'b2', path: '/b.yml', $file_sha256sum: sha(1) },
        },
      },
      resources: {},
    });
    stop.abort();
    expect(await done).toBe(0);
  });
});

describe('usage', () => {
  it('exits 2 on a bad command or option', async () => {
    expect((await run('frob', 'x')).code).toBe(2);
    expect((await run('build')).code).toBe(2);
    expect((await run('serve', 'x', '--port', 'abc')).code).toBe(2);
    expect((await run('build', 'x', '--bogus')).code).toBe(2);
  });
});
