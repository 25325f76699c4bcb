import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBundleFile, writeBundleFile } from './bundle-file.ts';
import { createEmbeddedEngine, loadBundle, loadEmbeddedEngine } from './engine.ts';
import { BundleLoadError } from './problems.ts';
import { BASIC_FIXTURE, removeTree, writeTree } from './test-support/tree.ts';
import type { Bundle } from './types.ts';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map(removeTree));
});

const ITEMS_SCHEMA = `
confs:
- name: Query
  fields:
  - { name: items_v1, type: Item_v1, isList: true, datafileSchema: /item-1.yml }
- name: Item_v1
  datafile: /item-1.yml
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: name, type: string }
  - { name: description, type: string }
  - { name: next, type: Item_v1 }
  - { name: nextRequired, type: Item_v1, isRequired: true }
  - { name: related, type: Item_v1, isList: true }
  - { name: kind, type: Kind_v1, isInterface: true }
- name: Kind_v1
  isInterface: true
  interfaceResolve: { strategy: fieldMap, field: type, fieldMap: { a: KindA_v1 } }
  fields:
  - { name: type, type: string }
- name: KindA_v1
  interface: Kind_v1
  fields:
  - { name: type, type: string }
`;

/** A bundle in memory, as qontract-server's test fixtures are: no schemas, no git. */
function itemsBundle(data: Record<string, Record<string, unknown>>): Bundle {
  const graphql = structuredClone(ITEMS_CONFS.confs) as Bundle['graphql'];
  return { data: data as Bundle['data'], resources: {}, graphql, schemas: {} };
}
const ITEMS_CONFS = {
  confs: [
    {
      name: 'Query',
      fields: [{ name: 'items_v1', type: 'Item_v1', isList: true, datafileSchema: '/item-1.yml' }],
    },
    {
      name: 'Item_v1',
      datafile: '/item-1.yml',
      fields: [
        { name: 'path', type: 'string', isRequired: true },
        { name: 'name', type: 'string' },
        { name: 'description', type: 'string' },
        { name: 'next', type: 'Item_v1' },
        { name: 'nextRequired', type: 'Item_v1', isRequired: true },
        { name: 'related', type: 'Item_v1', isList: true },
        { name: 'kind', type: 'Kind_v1', isInterface: true },
      ],
    },
    {
      name: 'Kind_v1',
      isInterface: true,
      interfaceResolve: { strategy: 'fieldMap', field: 'type', fieldMap: { a: 'KindA_v1' } },
      fields: [{ name: 'type', type: 'string' }],
    },
    { name: 'KindA_v1', interface: 'Kind_v1', fields: [{ name: 'type', type: 'string' }] },
  ],
};

describe('ordering', () => {
  it('orders datafiles by code point, not by locale', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': ITEMS_SCHEMA,
      'data/a.yml': '$schema: /item-1.yml\nname: a\n',
      'data/B.yml': '$schema: /item-1.yml\nname: B\n',
      'data/_x.yml': '$schema: /item-1.yml\nname: _x\n',
      'data/a-b.yml': '$schema: /item-1.yml\nname: a-b\n',
      'data/a/b.yml': '$schema: /item-1.yml\nname: a/b\n',
    });
    roots.push(root);
    const engine = await loadEmbeddedEngine(root, { git: false });
    const r = await engine.execute('{ items_v1 { name } }');
    expect((r.data!.items_v1 as { name: string }[]).map((i) => i.name)).toEqual([
      'B',
      '_x',
      'a-b',
      'a',
      'a/b',
    ]);
  });
});

describe('crossref quirks', () => {
  const engine = createEmbeddedEngine(
    itemsBundle({
      '/a.yml': { $schema: '/item-1.yml', name: 'a', nextRequired: { $ref: '/b.yml' } },
      '/b.yml': {
        $schema: '/item-1.yml',
        name: 'b',
        next: { $ref: '/missing.yml' },
        nextRequired: { $ref: '/a.yml#/name' },
        related: [{ $ref: '/a.yml' }, { name: 'inline' }],
      },
      '/c.yml': {
        $schema: '/item-1.yml',
        name: 'c',
        description: null,
        nextRequired: { $ref: '/a.yml' },
        related: [{ $ref: '/a.yml' }, { $ref: '/b.yml' }],
        kind: { type: 'unknown' },
      },
    }),
    'f'.repeat(64),
  );

  it('returns null for a missing target and for a #fragment ref, failing non-null fields', async () => {
    const r = await engine.execute(
      '{ items_v1(path: "/b.yml") { next { name } nextRequired { name } } }',
    );
    expect(r.data).toEqual({ items_v1: null });
    expect(r.errors).toEqual([
      expect.objectContaining({
        message: 'Cannot return null for non-nullable field Item_v1.nextRequired.',
        path: ['items_v1', 0, 'nextRequired'],
      }),
    ]);
    const optional = await engine.execute('{ items_v1(path: "/b.yml") { next { name } } }');
    expect(optional).toMatchObject({ data: { items_v1: [{ next: null }] } });
  });

  it('leaves an array that mixes refs and inline objects unresolved', async () => {
    const r = await engine.execute('{ items_v1(path: "/b.yml") { related { name path } } }');
    expect(r.data).toEqual({
      items_v1: [{ related: null }],
    });
    // the unresolved {$ref} item has no path, so the non-null path fails the list
    expect(r.errors?.[0]?.message).toBe('Cannot return null for non-nullable field Item_v1.path.');
    const names = await engine.execute('{ items_v1(path: "/b.yml") { related { name } } }');
    expect(names.data).toEqual({ items_v1: [{ related: [{ name: null }, { name: 'inline' }] }] });
  });

  it('resolves an array made only of refs', async () => {
    const r = await engine.execute('{ items_v1(path: "/c.yml") { related { name } } }');
    expect(r.data).toEqual({ items_v1: [{ related: [{ name: 'a' }, { name: 'b' }] }] });
  });

  it('fails a field whose stored value is an explicit null (relied-upon server quirk)', async () => {
    const r = await engine.execute('{ items_v1(path: "/c.yml") { name description } }');
    expect(r.data).toEqual({ items_v1: [{ name: 'c', description: null }] });
    expect(r.errors).toEqual([
      expect.objectContaining({
        message: "Cannot read properties of null (reading 'constructor')",
        path: ['items_v1', 0, 'description'],
      }),
    ]);
  });

  it('fails an interface item whose fieldMap value is unknown', async () => {
    const r = await engine.execute('{ items_v1(path: "/c.yml") { kind { type } } }');
    expect(r.data).toEqual({ items_v1: [{ kind: null }] });
    expect(r.errors?.[0]?.message).toMatch(
      /Abstract type "Kind_v1" must resolve to an Object type at runtime/,
    );
  });

  it('accepts the legacy bare-list graphql section', () => {
    expect(engine.schema.getQueryType()?.getFields()).toHaveProperty('items_v1');
  });
});

describe('bundle identity', () => {
  it('gives a directory the sha of the bundle that build writes, deterministically', async () => {
    const out = await writeTree({});
    roots.push(out);
    const fromDir = await loadBundle(BASIC_FIXTURE, { git: false });
    const again = await loadBundle(BASIC_FIXTURE, { git: false });
    expect(again.sha256).toBe(fromDir.sha256);
    const written = await writeBundleFile(join(out, 'bundle.json'), fromDir.bundle);
    const reread = await readBundleFile(join(out, 'bundle.json'));
    expect(reread.sha256).toBe(fromDir.sha256);
    expect(written.sha256).toBe(fromDir.sha256);

    const fromFile = await loadEmbeddedEngine(join(out, 'bundle.json'));
    const fromTree = await loadEmbeddedEngine(BASIC_FIXTURE, { git: false });
    const query =
      '{ namespaces_v1 { name labels cluster { name } } resources_v1 { path sha256sum } }';
    expect(await fromFile.execute(query)).toEqual(await fromTree.execute(query));
    expect(fromFile.sha256).toBe(fromTree.sha256);
  });

  it('reports git info from the bundle, or null', () => {
    const bundle = { ...itemsBundle({}), git_commit: 'abc', git_commit_timestamp: '1606295532' };
    expect(createEmbeddedEngine(bundle, 'x').gitCommit).toEqual({
      commit: 'abc',
      timestamp: '1606295532',
    });
    expect(createEmbeddedEngine(itemsBundle({}), 'x').gitCommit).toBeNull();
  });

  it('refuses a bundle whose datafiles lack $schema or are empty, listing each', () => {
    const bad = itemsBundle({ '/x.yml': { name: 'x' }, '/y.yml': {} });
    const error = (() => {
      try {
        createEmbeddedEngine(bad, 'x');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(BundleLoadError);
    expect((error as BundleLoadError).problems.map((p) => `${p.file}: ${p.reason}`)).toEqual([
      '/x.yml: the data file has no $schema',
      '/y.yml: the data file is empty',
    ]);
  });

  it('refuses a bundle.json that is not a bundle', async () => {
    const root = await writeTree({ 'bundle.json': '{"data": {}}', 'broken.json': '{' });
    roots.push(root);
    await expect(loadEmbeddedEngine(join(root, 'bundle.json'))).rejects.toThrow(
      /missing or invalid "resources"/,
    );
    await expect(loadEmbeddedEngine(join(root, 'broken.json'))).rejects.toThrow(/invalid JSON/);
    await expect(loadEmbeddedEngine(join(root, 'nope'))).rejects.toThrow(/no such file/);
  });
});
