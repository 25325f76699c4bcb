import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { type Dirent, opendirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BundleLoadError } from './problems.ts';
import { buildBundleFromDirectory, collectBundleFromDirectory } from './read-directory.ts';
import { BASIC_FIXTURE, removeTree, SMALL_SCHEMA_YML, writeTree } from './test-support/tree.ts';

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map(removeTree));
});

describe('buildBundleFromDirectory', () => {
  it('keys data files by /-relative path, in code-point order, with $file_sha256sum', async () => {
    const bundle = await buildBundleFromDirectory(BASIC_FIXTURE, { git: false });
    const keys = Object.keys(bundle.data);
    expect(keys).toEqual([...keys].sort());
    expect(keys).toContain('/openshift/prod-1/cluster.yml');
    const raw = readFileSync(join(BASIC_FIXTURE, 'data/openshift/prod-1/cluster.yml'));
    expect(bundle.data['/openshift/prod-1/cluster.yml']!.$file_sha256sum).toBe(sha(raw));
    // hidden files and other extensions are skipped
    expect(keys).not.toContain('/openshift/.ignored.yml');
    expect(keys).not.toContain('/README.md');
    expect(bundle.git_commit).toBeUndefined();
  });

  it('records every non-hidden resource with content, sha256sum and the $schema line', async () => {
    const bundle = await buildBundleFromDirectory(BASIC_FIXTURE, { git: false });
    expect(Object.keys(bundle.resources)).toEqual([
      '/app-a/configmap.yml',
      '/app-a/notes.txt',
      '/app-a/route.yml',
    ]);
    const cm = bundle.resources['/app-a/configmap.yml']!;
    const raw = readFileSync(join(BASIC_FIXTURE, 'resources/app-a/configmap.yml'));
    expect(cm).toMatchObject({
      path: '/app-a/configmap.yml',
      content: raw.toString(),
      sha256sum: sha(raw),
    });
    // found by regex although the file is two YAML documents
    expect(cm.$schema).toBe('/openshift/config-map-1.yml');
    expect(bundle.resources['/app-a/notes.txt']!.$schema).toBeNull();
    expect(bundle.resources['/app-a/route.yml']!.$schema).toBeNull();
  });

  it('computes resource backrefs from isResource fields with bundler jsonpaths', async () => {
    const bundle = await buildBundleFromDirectory(BASIC_FIXTURE, { git: false });
    expect(bundle.resources['/app-a/configmap.yml']!.backrefs).toEqual([
      {
        path: '/openshift/prod-1/namespaces/app-a-prod.yml',
        datafileSchema: '/openshift/namespace-1.yml',
        jsonpath: 'openshiftResources.[0].path',
      },
    ]);
    expect(bundle.resources['/app-a/notes.txt']!.backrefs).toEqual([]);
  });

  it('records the git commit and its timestamp when the tree is a git checkout', async () => {
    const root = await writeTree({
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
    });
    roots.push(root);
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    git('init', '-q');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
    const bundle = await buildBundleFromDirectory(root);
    expect(bundle.git_commit).toBe(git('rev-parse', 'HEAD'));
    expect(bundle.git_commit_timestamp).toBe(git('log', '-1', '--format=%ct'));
    expect(bundle.git_commit_timestamp).toMatch(/^\d+$/);
  });

  it('adds $file_sha256sum to metaschema-1 schemas only', async () => {
    const root = await writeTree({
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
      'schemas/thing-1.yml':
        '$schema: /metaschema-1.json\ntype: object\nproperties:\n  name: {type: string}\n',
      'schemas/common-1.json':
        '{"$schema": "http://json-schema.org/draft-06/schema", "properties": {}}',
      'schemas/notes.txt': 'ignored',
    });
    roots.push(root);
    const bundle = await buildBundleFromDirectory(root, { git: false });
    expect(Object.keys(bundle.schemas)).toEqual(['/common-1.json', '/thing-1.yml']);
    expect(bundle.schemas['/thing-1.yml']!.properties).toHaveProperty(
      '$file_sha256sum.type',
      'string',
    );
    expect(bundle.schemas['/common-1.json']!.properties).toEqual({});
  });

  it("orders a resource's backrefs as the bundler reads the files: depth first, listing order", async () => {
    const files = ['z/b.yml', 'z/a.yml', 'z/deep/m.yml', 'y.yml', 'a/c.yml', 'x.yml', 'b.yml'];
    const root = await writeTree({
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
      'resources/r.txt': 'r',
      ...Object.fromEntries(
        files.map((f, i) => [`data/${f}`, `$schema: /thing-1.yml\nname: n${i}\ndoc: /r.txt\n`]),
      ),
    });
    roots.push(root);
    // qontract-bundler's Path.walk(top_down=False): subdirectories first, then the directory's
    // own files, each directory in the order the file system lists it (os.scandir, the same
    // order opendir gives; not sorted).
    const walk = (dir: string): string[] => {
      const entries: Dirent[] = [];
      const handle = opendirSync(dir);
      for (let e = handle.readSync(); e !== null; e = handle.readSync()) entries.push(e);
      handle.closeSync();
      return [
        ...entries.filter((e) => e.isDirectory()).flatMap((e) => walk(join(dir, e.name))),
        ...entries.filter((e) => !e.isDirectory()).map((e) => join(dir, e.name)),
      ];
    };
    const expected = walk(join(root, 'data')).map((f) => f.slice(join(root, 'data').length));
    expect(expected.indexOf('/z/deep/m.yml')).toBeLessThan(expected.indexOf('/z/a.yml'));
    expect(expected.indexOf('/z/a.yml')).toBeLessThan(expected.indexOf('/y.yml'));
    const bundle = await buildBundleFromDirectory(root, { git: false });
    expect(bundle.resources['/r.txt']!.backrefs.map((b) => b.path)).toEqual(expected);
    // The data itself is kept in code-point order, as the bundle's sorted JSON has it.
    expect(Object.keys(bundle.data)).toEqual([...expected].sort());
  });

  it('reads .json data files, hidden directories and symlinked files, but enters no symlinked directory', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
      'data/a.json': '{"name": "j", "$schema": "/thing-1.yml"}',
      'data/.hidden-dir/b.yaml': '$schema: /thing-1.yml\nname: b\n',
      'outside/c.yml': '$schema: /thing-1.yml\nname: c\n',
    });
    roots.push(root);
    symlinkSync(join(root, 'outside'), join(root, 'data/linked-dir'));
    symlinkSync(join(root, 'outside/c.yml'), join(root, 'data/linked.yml'));
    const bundle = await buildBundleFromDirectory(root, { git: false });
    // As the bundler's Path.walk: a symlink is listed as a file (read through), never walked into.
    expect(Object.keys(bundle.data)).toEqual(['/.hidden-dir/b.yaml', '/a.json', '/linked.yml']);
    expect(bundle.data['/a.json']).toEqual({
      $file_sha256sum: sha('{"name": "j", "$schema": "/thing-1.yml"}'),
      $schema: '/thing-1.yml',
      name: 'j',
    });
  });

  it('collects every problem, each with its file and reason, before failing', async () => {
    const root = await writeTree({
      'data/bad-yaml.yml': 'a: [1, 2\n',
      'data/no-schema.yml': 'name: x\n',
      'data/list.yml': '- 1\n- 2\n',
      'data/empty.yml': '',
      'data/date.yml': '$schema: /thing-1.yml\nwhen: 2024-01-01\n',
      'data/ok.yml': '$schema: /thing-1.yml\nname: ok\n',
      'resources/blob.bin': new Uint8Array([0xff, 0xfe, 0x00, 0x81]),
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
    });
    roots.push(root);
    const error = await buildBundleFromDirectory(root, { git: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleLoadError);
    const problems = (error as BundleLoadError).problems.map((p) => `${p.file}: ${p.reason}`);
    expect(problems).toEqual([
      expect.stringMatching(/^\/bad-yaml\.yml: invalid YAML at line \d+, column \d+: /),
      '/blob.bin: resource is not UTF-8 text: invalid byte 0xff at byte offset 0 (line 1, column 1)',
      expect.stringMatching(/^\/date\.yml: when: unquoted date\/time '2024-01-01'/),
      '/empty.yml: the file holds no YAML document',
      '/list.yml: a data file must be a mapping',
      '/no-schema.yml: the data file has no $schema',
    ]);
    expect((error as Error).message).toContain('6 problems');
  });

  it('fails on bytes that are not UTF-8 in any file the bundler reads, naming file, offset and line', async () => {
    // The bundler decodes every data, schema and resource file as strict UTF-8
    // (a UnicodeDecodeError fails the bundle); one rule for all of them.
    const latin1 = (before: string, after: string) =>
      Buffer.concat([Buffer.from(before), Buffer.from([0xe9]), Buffer.from(after)]);
    const root = await writeTree({
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
      'data/ok.yml': '$schema: /thing-1.yml\nname: ok\n',
      'data/latin1.yml': latin1('$schema: /thing-1.yml\nname: caf', '\n'),
      'data/latin1.json': latin1('{"$schema": "/thing-1.yml", "name": "caf', '"}'),
      'schemas/thing-1.yml': latin1('$schema: /metaschema-1.json\ndescription: caf', '\n'),
      'resources/latin1.yml': latin1('kind: ConfigMap\ndata:\n  name: "caf', '"\n'),
      'resources/ok.yml': 'caf\u00e9: \ufffd\n',
    });
    roots.push(root);
    const { bundle, problems } = await collectBundleFromDirectory(root, { git: false });
    expect(problems.map((p) => `${p.file}: ${p.reason}`)).toEqual([
      '/latin1.json: data file is not UTF-8 text: invalid byte 0xe9 at byte offset 40 (line 1, column 41)',
      '/latin1.yml: data file is not UTF-8 text: invalid byte 0xe9 at byte offset 31 (line 2, column 10)',
      '/latin1.yml: resource is not UTF-8 text: invalid byte 0xe9 at byte offset 34 (line 3, column 13)',
      '/thing-1.yml: JSON schema is not UTF-8 text: invalid byte 0xe9 at byte offset 44 (line 2, column 17)',
    ]);
    expect(Object.keys(bundle.data)).toEqual(['/ok.yml']);
    // valid multi-byte text (and a real U+FFFD) is read as is
    expect(bundle.resources['/ok.yml']!.content).toBe('caf\u00e9: \ufffd\n');
    expect(problems.map((p) => p.kind)).toEqual(['FILE', 'FILE', 'FILE', 'FILE']);
  });

  it('reports a missing graphql schema file and data dir', async () => {
    const root = await writeTree({ 'other/x.txt': 'x' });
    roots.push(root);
    const { problems } = await collectBundleFromDirectory(root, { git: false });
    expect(problems.map((p) => p.reason)).toEqual(
      expect.arrayContaining(['data directory not found', 'GraphQL schema file not found']),
    );
  });
});
