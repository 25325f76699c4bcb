import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffBundles } from './bundle-diff.ts';
import { BundleTextCache, serializeBundle } from './bundle-file.ts';
import { collectBundleFromDirectory, collectBundlePair } from './read-directory.ts';
import { removeTree, SMALL_SCHEMA_YML, writeTree } from './test-support/tree.ts';
import type { Bundle } from './types.ts';

const EXAMPLE = resolve(import.meta.dirname, '../../../../examples/app-interface');
const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map(removeTree));
});

/** A change to one tree: files to write (path → text) or delete (null), or text to replace. */
type Mutation = (root: string) => Promise<void>;

const write =
  (path: string, text: string | Buffer): Mutation =>
  (root) =>
    writeFile(join(root, path), text);
const remove =
  (path: string): Mutation =>
  (root) =>
    rm(join(root, path));
const replace =
  (path: string, from: string, to: string): Mutation =>
  async (root) => {
    const text = await readFile(join(root, path), 'utf8');
    if (!text.includes(from)) throw new Error(`${path} does not contain ${from}`);
    await writeFile(join(root, path), text.replace(from, to));
  };

async function exampleCopy(mutations: readonly Mutation[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'qontract-pair-'));
  roots.push(root);
  await cp(EXAMPLE, root, { recursive: true });
  for (const mutate of mutations) await mutate(root);
  return root;
}

/** Every object and array reachable from `value`. */
function objectsOf(value: unknown, into = new Set<object>()): Set<object> {
  if (typeof value !== 'object' || value === null || into.has(value)) return into;
  into.add(value);
  for (const v of Object.values(value)) objectsOf(v, into);
  return into;
}

/**
 * Builds the pair and each tree on its own, and expects the same results;
 * and no object in both bundles, so nothing done to one shows in the other.
 */
async function expectPairMatchesSingles(base: string, head: string): Promise<Bundle[]> {
  const pair = await collectBundlePair(base, head, { git: false });
  const bundles: Bundle[] = [];
  for (const [side, root] of [
    ['base', base],
    ['head', head],
  ] as const) {
    const single = await collectBundleFromDirectory(root, { git: false });
    const got = pair[side];
    expect(got.problems, side).toEqual(single.problems);
    expect(got.unloaded, side).toEqual(single.unloaded);
    expect(got.bundle, side).toEqual(single.bundle);
    expect(got.sha256, side).toBe(serializeBundle(single.bundle).sha256);
    bundles.push(got.bundle);
  }
  const headObjects = objectsOf(bundles[1]);
  const shared = [...objectsOf(bundles[0])].filter((o) => headObjects.has(o));
  expect(shared).toEqual([]);
  return bundles;
}

const ALICE = 'data/access/users/alice.yml';
const NAMESPACE_SCHEMA = 'schemas/openshift/namespace-1.yml';
const CONFIGMAP = 'resources/example-app/configmap.yml';
const ADMINS = '/access/roles/cluster-admins.yml';

const cases: Record<string, readonly Mutation[]> = {
  'a changed data file': [replace(ALICE, 'name: ', 'name: Alice Changed # ')],
  // cluster-admins gets its __identifier only from alice's list of roles
  'a data file whose change changes the post-processing of another': [
    replace(ALICE, `  - $ref: ${ADMINS}\n`, ''),
  ],
  'a changed resource': [replace(CONFIGMAP, 'kind:', 'kind:  ')],
  'an added and a removed file': [
    write('data/access/users/zed.yml', '$schema: /access/user-1.yml\nname: zed\n'),
    write('resources/example-app/new.yml', '$schema: /openshift/config-map-1.yml\n'),
    remove('data/access/users/dave.yml'),
    remove('resources/example-app/route.yml'),
  ],
  // resource paths become resourcerefs the walk follows: the resources get backrefs
  'a changed JSON schema': [
    replace(
      NAMESPACE_SCHEMA,
      'openshiftResources: { $ref: /openshift/shared-resources-1.yml#/definitions/openshiftResources }',
      'openshiftResources: { type: array, items: { type: object, properties: { path: { $ref: /common-1.json#/definitions/resourceref } } } }',
    ),
  ],
  // roles lose the __identifier (data) and the JSON schema its __identifier property
  'a changed GraphQL schema': [
    replace(
      'graphql-schemas/schema.yml',
      '  - name: Role_v1\n    datafile: /access/role-1.yml\n    fields:\n      - { name: schema, type: string, isRequired: true }\n      - { name: path, type: string, isRequired: true }\n      - { name: name, type: string, isRequired: true, isUnique: true, isSearchable: true }',
      '  - name: Role_v1\n    datafile: /access/role-1.yml\n    fields:\n      - { name: schema, type: string, isRequired: true }\n      - { name: path, type: string, isRequired: true }\n      - { name: name, type: string, isRequired: true, isSearchable: true }',
    ),
  ],
  'a data file that does not parse': [replace(ALICE, 'name: ', 'name: [unclosed ')],
  // EISDIR when read: the worker that reads the files reports it as reading on this thread does
  'a resource that cannot be read': [
    (root) => symlink(join(root, 'data'), join(root, 'resources/example-app/dir.yml')),
  ],
  'a JSON schema, a resource and the GraphQL schema that do not load': [
    write('schemas/access/user-1.yml', 'a: [\n'),
    write(CONFIGMAP, Buffer.from([0x61, 0xe9, 0x0a])),
    write('graphql-schemas/schema.yml', 'confs: 3\n'),
  ],
};

describe('collectBundlePair', () => {
  for (const [name, mutations] of Object.entries(cases)) {
    it(`builds both trees as single builds do: ${name} in the head`, async () => {
      await expectPairMatchesSingles(EXAMPLE, await exampleCopy(mutations));
    });
    it(`builds both trees as single builds do: ${name} in the base`, async () => {
      await expectPairMatchesSingles(await exampleCopy(mutations), EXAMPLE);
    });
  }

  it('keeps the post-processing of each tree to itself', async () => {
    const [base, head] = await expectPairMatchesSingles(
      EXAMPLE,
      await exampleCopy(cases['a data file whose change changes the post-processing of another']!),
    );
    expect(base!.data[ADMINS]!.__identifier).toEqual(expect.any(String));
    expect(head!.data[ADMINS]!.__identifier).toBeUndefined();
    // The role file's bytes did not change, its object did: /diff lists it, as qontract-server does.
    expect(Object.keys(diffBundles(base!, head!).datafiles)).toEqual([
      ADMINS,
      `/${ALICE.slice('data/'.length)}`,
    ]);
  });

  it('builds identical trees into equal bundles', async () => {
    const pair = await collectBundlePair(EXAMPLE, EXAMPLE, { git: false });
    expect(pair.base.sha256).toBe(pair.head.sha256);
    expect(pair.base.bundle).toEqual(pair.head.bundle);
  });

  it('keeps the document order of mappings that decides the order of backrefs', async () => {
    // No JSON schemas: the GraphQL `isResource` fields mark the resource references.
    const schema = `${SMALL_SCHEMA_YML}  - { name: alt, type: string, isResource: true }\n`;
    const tree = {
      'graphql-schemas/schema.yml': schema,
      'data/a.yml': '$schema: /thing-1.yml\nname: a\ndoc: /r.yml\nalt: /r.yml\n',
      'resources/r.yml': 'r\n',
    };
    const base = await writeTree(tree);
    const head = await writeTree({ ...tree, 'data/b.yml': '$schema: /thing-1.yml\nname: b\n' });
    roots.push(base, head);
    const [, headBundle] = await expectPairMatchesSingles(base, head);
    expect(headBundle!.resources['/r.yml']!.backrefs.map((b) => b.jsonpath)).toEqual([
      'doc',
      'alt',
    ]);
  });

  it('reports a missing tree as a single build does', async () => {
    const missing = join(EXAMPLE, 'nope');
    await expectPairMatchesSingles(missing, EXAMPLE);
    await expectPairMatchesSingles(EXAMPLE, missing);
  });
});

describe('serializeBundle with a BundleTextCache', () => {
  const bundle = (): Bundle => ({
    data: {
      '/b.yml': { $schema: '/s-1.yml', name: 'caf\u00e9 "b"', list: [1, 2.5, null, true] },
      '/a.yml': { $schema: '/s-1.yml', z: 1, a: { y: [], x: {} } },
    },
    resources: {
      '/r.txt': { path: '/r.txt', content: 'x\n', sha256sum: 'ab', $schema: null, backrefs: [] },
    },
    graphql: { confs: [] },
    schemas: {},
    git_commit: 'c',
  });

  it('writes the same text as without a cache, for bundles that share parts or not', () => {
    const cache = new BundleTextCache();
    const first = bundle();
    expect(serializeBundle(first, cache).text).toBe(serializeBundle(first).text);
    const second = bundle();
    second.data['/a.yml']!.z = 2;
    second.data['/c.yml'] = { $schema: '/s-1.yml' };
    delete second.data['/b.yml'];
    second.resources['/r.txt']!.backrefs.push({
      path: '/a.yml',
      datafileSchema: '/s-1.yml',
      jsonpath: 'doc',
    });
    delete second.git_commit;
    expect(serializeBundle(second, cache).text).toBe(serializeBundle(second).text);
    expect(serializeBundle(bundle(), cache).text).toBe(serializeBundle(first).text);
  });
});
