import { describe, expect, it, onTestFinished } from 'vitest';
import { diffBundleSchemas, diffBundles } from './bundle-diff.ts';
import { createEmbeddedEngine } from './engine.ts';
import { startBundleServer } from './server.ts';
import type { Bundle } from './types.ts';

const resource = (path: string, content: string, sha256sum: string) => ({
  path,
  content,
  sha256sum,
  $schema: null,
  backrefs: [],
});

const GRAPHQL: Bundle['graphql'] = {
  $schema: '/app-interface/graphql-schemas-1.yml',
  confs: [
    {
      name: 'Query',
      fields: [
        { name: 'things_v1', type: 'Thing_v1', isList: true, datafileSchema: '/thing-1.yml' },
      ],
    },
    {
      name: 'Thing_v1',
      datafile: '/thing-1.yml',
      fields: [
        { name: 'schema', type: 'string', isRequired: true },
        { name: 'name', type: 'string', isRequired: true },
      ],
    },
  ],
};

const BASE: Bundle = {
  data: {
    '/a.yml': { $schema: '/thing-1.yml', name: 'a' },
    '/b.yml': { $schema: '/thing-1.yml', name: 'b' },
    '/gone.yml': { $schema: '/thing-1.yml', name: 'gone' },
  },
  resources: {
    '/r1.yml': resource('/r1.yml', 'one', '1'),
    '/r2.yml': resource('/r2.yml', 'two', '2'),
  },
  graphql: GRAPHQL,
  schemas: { '/thing-1.yml': { type: 'object' }, '/old-1.yml': { type: 'object' } },
};

const HEAD: Bundle = {
  data: {
    '/a.yml': { $schema: '/thing-1.yml', name: 'a' },
    '/b.yml': { $schema: '/thing-1.yml', name: 'b2' },
    '/new.yml': { $schema: '/other-1.yml', name: 'new' },
  },
  resources: {
    '/r1.yml': resource('/r1.yml', 'one', '1'),
    '/r2.yml': resource('/r2.yml', 'two!', '2b'),
    '/r3.yml': resource('/r3.yml', 'three', '3'),
  },
  graphql: GRAPHQL,
  schemas: { '/thing-1.yml': { type: 'object', required: ['name'] }, '/new-1.yml': {} },
};

describe('diffBundles', () => {
  it("lists changed, added and removed files in qontract-server's /diff shape", () => {
    const diff = diffBundles(BASE, HEAD);
    expect(Object.keys(diff.datafiles)).toEqual(['/b.yml', '/gone.yml', '/new.yml']);
    expect(diff.datafiles['/b.yml']).toEqual({
      datafilepath: '/b.yml',
      datafileschema: '/thing-1.yml',
      old: { $schema: '/thing-1.yml', name: 'b', path: '/b.yml' },
      new: { $schema: '/thing-1.yml', name: 'b2', path: '/b.yml' },
    });
    expect(diff.datafiles['/gone.yml']).not.toHaveProperty('new');
    expect(diff.datafiles['/new.yml']).not.toHaveProperty('old');
    expect(diff.datafiles['/new.yml']?.datafileschema).toBe('/other-1.yml');
    expect(Object.keys(diff.resources)).toEqual(['/r2.yml', '/r3.yml']);
    expect(diff.resources['/r2.yml']?.new?.content).toBe('two!');
  });

  it('lists a file whose bytes are unchanged but whose bundler-added __identifier changed', () => {
    // A file gains its top-level __identifier when another file starts listing it
    // in a context-unique array: same bytes, same $file_sha256sum, different object.
    const role = { $schema: '/thing-1.yml', name: 'admins', $file_sha256sum: 'f'.repeat(64) };
    const base: Bundle = { ...BASE, data: { '/role.yml': role } };
    const head: Bundle = { ...BASE, data: { '/role.yml': { ...role, __identifier: 'abc' } } };
    const diff = diffBundles(base, head);
    expect(Object.keys(diff.datafiles)).toEqual(['/role.yml']);
    expect(diff.datafiles['/role.yml']?.old).not.toHaveProperty('__identifier');
    expect(diff.datafiles['/role.yml']?.new?.__identifier).toBe('abc');
    expect(diffBundles(base, base).datafiles).toEqual({});
  });

  it('reports changed JSON schemas and whether the GraphQL schema changed', () => {
    expect(diffBundleSchemas(BASE, HEAD)).toEqual({
      schemas: [
        { path: '/new-1.yml', change: 'added' },
        { path: '/old-1.yml', change: 'removed' },
        { path: '/thing-1.yml', change: 'changed' },
      ],
      graphqlChanged: false,
    });
    expect(diffBundleSchemas(BASE, { ...HEAD, graphql: [] }).graphqlChanged).toBe(true);
  });
});

describe('startBundleServer with two bundles', () => {
  it('answers /diff/<base>/<head>, one file, and 404 for an unknown sha', async () => {
    const base = createEmbeddedEngine(BASE, 'a'.repeat(64));
    const head = createEmbeddedEngine(HEAD, 'b'.repeat(64));
    const server = await startBundleServer([base, head], { port: 0 });
    onTestFinished(() => server.close());
    const get = (path: string) => fetch(`${server.url}${path}`);

    expect(await (await get('/sha256')).text()).toBe(head.sha256);
    const all = await get(`/diff/${base.sha256}/${head.sha256}`);
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual(JSON.parse(JSON.stringify(diffBundles(BASE, HEAD))));

    const one = await (await get(`/diff/${base.sha256}/${head.sha256}/datafile/gone.yml`)).json();
    expect(one).toEqual({
      datafilepath: '/gone.yml',
      datafileschema: '/thing-1.yml',
      old: { $schema: '/thing-1.yml', name: 'gone', path: '/gone.yml' },
    });
    const res = await get(`/diff/${base.sha256}/${head.sha256}/resourcefile/r3.yml`);
    expect(((await res.json()) as { new: { content: string } }).new.content).toBe('three');

    const missing = await get(`/diff/${'c'.repeat(64)}/${head.sha256}`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe(`Bundle ${'c'.repeat(64)} not found`);
    expect((await get(`/diff/${base.sha256}/${head.sha256}/other/x.yml`)).status).toBe(400);

    // Both bundles answer GraphQL by sha.
    for (const sha of [base.sha256, head.sha256]) {
      const r = await fetch(`${server.url}/graphqlsha/${sha}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ things_v1 { name } }' }),
      });
      expect(r.status).toBe(200);
    }
  });
});

describe('startBundleServer with cache', () => {
  it('answers a repeated request per bundle from its cache', async () => {
    const engine = createEmbeddedEngine(HEAD, 'b'.repeat(64));
    let executed = 0;
    const counting = {
      ...engine,
      executeWithPhase: (...args: Parameters<typeof engine.executeWithPhase>) => {
        executed += 1;
        return engine.executeWithPhase(...args);
      },
    };
    const other = createEmbeddedEngine(BASE, 'a'.repeat(64));
    const server = await startBundleServer([other, counting], { port: 0, cache: true });
    onTestFinished(() => server.close());
    const ask = async (query: string) => {
      const r = await fetch(`${server.url}/graphqlsha/${counting.sha256}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      return r.json();
    };
    const first = await ask('{ things_v1 { name } }');
    expect(await ask('{ things_v1 { name } }')).toEqual(first);
    expect(first).toEqual({
      data: { things_v1: [{ name: 'a' }, { name: 'b2' }] },
      extensions: { schemas: ['/thing-1.yml'] },
    });
    expect(executed).toBe(1);
    await ask('{ things_v1 { schema } }');
    expect(executed).toBe(2);
  });
});
