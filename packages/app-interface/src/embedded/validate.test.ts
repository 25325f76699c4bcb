import { afterAll, describe, expect, it } from 'vitest';
import { loadEmbeddedEngine } from './engine.ts';
import { BundleLoadError } from './problems.ts';
import { buildBundleFromDirectory } from './read-directory.ts';
import { removeTree, SMALL_SCHEMA_YML, writeTree } from './test-support/tree.ts';
import { validateBundle, validateBundleInSlices } from './validate.ts';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map(removeTree));
});

const COMMON = JSON.stringify({
  $schema: 'http://json-schema.org/draft-06/schema',
  definitions: {
    crossref: {
      type: 'object',
      properties: { $ref: { type: 'string' } },
      required: ['$ref'],
      additionalProperties: false,
    },
    resourceref: { type: 'string', pattern: '^/' },
    name: { type: 'string', pattern: '(?i)^[a-z][a-z0-9-]*$' },
  },
});

const THING_SCHEMA = `
$schema: /metaschema-1.json
version: '1.0'
type: object
additionalProperties: false
properties:
  $schema: { type: string, enum: [/thing-1.yml] }
  name: { $ref: /common-1.json#/definitions/name }
  other:
    $ref: /common-1.json#/definitions/crossref
    $schemaRef: /thing-1.yml
  doc: { $ref: /common-1.json#/definitions/resourceref }
required: [$schema, name]
`;

const OTHER_SCHEMA = `
$schema: /metaschema-1.json
type: object
properties:
  $schema: { type: string }
  size: { type: integer }
`;

const METASCHEMA = JSON.stringify({
  $schema: 'http://json-schema.org/draft-06/schema',
  type: 'object',
  required: ['$schema', 'properties'],
  properties: { $schema: { type: 'string' }, properties: { type: 'object' } },
});

async function tree(files: Record<string, string | Uint8Array>): Promise<string> {
  const root = await writeTree({
    'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
    'schemas/metaschema-1.json': METASCHEMA,
    'schemas/common-1.json': COMMON,
    'schemas/thing-1.yml': THING_SCHEMA,
    'schemas/other-1.yml': OTHER_SCHEMA,
    ...files,
  });
  roots.push(root);
  return root;
}

const problemsOf = async (root: string) => {
  const e = await loadEmbeddedEngine(root, { git: false }).catch((err: unknown) => err);
  expect(e).toBeInstanceOf(BundleLoadError);
  return (e as BundleLoadError).problems.map((p) => `${p.file}: ${p.reason}`);
};

describe('validation of an app-interface tree', () => {
  it('validates in slices with the same problems, letting other work run between them', async () => {
    const root = await tree({
      'data/a.yml': '$schema: /thing-1.yml\nname: 1bad\nother: {$ref: /gone.yml}\n',
      'data/b.yml': '$schema: /thing-1.yml\nname: beta\ndoc: /missing.md\n',
      'data/c.yml': '$schema: /other-1.yml\nsize: big\n',
    });
    const bundle = await buildBundleFromDirectory(root, { git: false });
    const whole = validateBundle(bundle);
    expect(whole.length).toBeGreaterThanOrEqual(4);
    let ranBetween = false;
    setImmediate(() => {
      ranBetween = true;
    });
    const sliced = validateBundleInSlices(bundle, undefined, 0);
    expect(ranBetween).toBe(false);
    expect(await sliced).toEqual(whole);
    expect(ranBetween).toBe(true);
  });

  it('accepts valid data, including a (?i) pattern, $schemaRef and a resource path', async () => {
    const root = await tree({
      'data/a.yml': '$schema: /thing-1.yml\nname: Alpha\nother: {$ref: /b.yml}\ndoc: /doc.md\n',
      'data/b.yml': '$schema: /thing-1.yml\nname: beta\n',
      'resources/doc.md': '# doc\n',
    });
    const bundle = await buildBundleFromDirectory(root, { git: false });
    expect(validateBundle(bundle)).toEqual([]);
    await expect(loadEmbeddedEngine(root, { git: false })).resolves.toBeDefined();
  });

  it('reports malformed YAML, a missing $schema, a dangling $ref and a schema violation at once', async () => {
    const root = await tree({
      'data/broken.yml': 'name: [unclosed\n',
      'data/no-schema.yml': 'name: orphan\n',
      'data/dangling.yml': '$schema: /thing-1.yml\nname: dangling\nother: {$ref: /nowhere.yml}\n',
      'data/invalid.yml': '$schema: /thing-1.yml\nname: 1-bad\ncolour: red\n',
    });
    const problems = await problemsOf(root);
    expect(problems).toEqual([
      // files that did not load come first: they are the root causes
      expect.stringMatching(/^\/broken\.yml: invalid YAML at line \d+, column \d+: /),
      '/no-schema.yml: the data file has no $schema',
      '/dangling.yml: other: $ref /nowhere.yml does not exist',
      // a file's schema violations: the most specific (deepest) first
      expect.stringMatching(/^\/invalid\.yml: schema \/thing-1\.yml: \/name must match pattern/),
      "/invalid.yml: schema /thing-1.yml: (root) has unexpected property 'colour'",
    ]);
  });

  it('reports a file that failed to load first, and the references to it as such', async () => {
    // One broken file used to show up last, after a "$ref ... does not exist"
    // for every file that points at it.
    const root = await tree({
      'data/a.yml': '$schema: /thing-1.yml\nname: a\nother: {$ref: /z-broken.yml}\ndoc: /bad.md\n',
      'data/b.yml': '$schema: /thing-1.yml\nname: b\nother: {$ref: /z-broken.yml}\n',
      'data/m.yml': '$schema: /thing-1.yml\nname: m\nother: {$ref: /gone.yml}\n',
      'data/z-broken.yml': '$schema: /thing-1.yml\nname: [unclosed\n',
      'resources/bad.md': new Uint8Array([0x23, 0xff]),
    });
    expect(await problemsOf(root)).toEqual([
      '/bad.md: resource is not UTF-8 text: invalid byte 0xff at byte offset 1 (line 1, column 2)',
      expect.stringMatching(/^\/z-broken\.yml: invalid YAML at line \d+, column \d+: /),
      '/a.yml: doc: resource /bad.md failed to load',
      '/a.yml: other: $ref /z-broken.yml failed to load',
      '/b.yml: other: $ref /z-broken.yml failed to load',
      '/m.yml: other: $ref /gone.yml does not exist',
    ]);
  });

  it('does not repeat a JSON schema that failed to load for every file that uses it', async () => {
    const root = await tree({
      'schemas/thing-1.yml': 'type: [unclosed\n',
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
      'data/b.yml': '$schema: /thing-1.yml\nname: b\n',
    });
    expect(await problemsOf(root)).toEqual([
      expect.stringMatching(/^\/thing-1\.yml: invalid YAML at line \d+, column \d+: /),
    ]);
  });

  it('accepts a datafile $schema without the leading slash, as the validator does', async () => {
    const root = await tree({ 'data/a.yml': '$schema: thing-1.yml\nname: a\nextra: 1\n' });
    expect(await problemsOf(root)).toEqual([
      // the schema is found; its own enum still wants the canonical form
      '/a.yml: schema /thing-1.yml: /$schema must be one of ["/thing-1.yml"]',
      "/a.yml: schema /thing-1.yml: (root) has unexpected property 'extra'",
    ]);
  });

  it('checks $schemaRef, unknown schemas, missing resources and unique fields', async () => {
    const root = await tree({
      'data/a.yml': '$schema: /thing-1.yml\nname: same\nother: {$ref: /o.yml}\ndoc: /missing.md\n',
      'data/b.yml': '$schema: /thing-1.yml\nname: same\n',
      'data/o.yml': '$schema: /other-1.yml\nsize: 1\n',
      'data/u.yml': '$schema: /unknown-1.yml\n',
    });
    const problems = await problemsOf(root);
    expect(problems).toEqual([
      // a data file naming an unknown schema first: $schemaRefs to it would fail too
      '/u.yml: schema /unknown-1.yml not found',
      '/a.yml: Thing_v1.name "same" must be unique, but is used in /a.yml, /b.yml',
      '/a.yml: doc: resource /missing.md does not exist',
      '/a.yml: schema /thing-1.yml: /other $ref /o.yml has $schema /other-1.yml, expected /thing-1.yml',
    ]);
  });

  it('lists a data file naming an unknown $schema before the $schemaRefs that fail because of it', async () => {
    const referrers = Object.fromEntries(
      [1, 2, 3, 4, 5, 6].map((i) => [
        `data/a${i}.yml`,
        `$schema: /thing-1.yml\nname: a${i}\nother: {$ref: /z/typo.yml}\n`,
      ]),
    );
    const root = await tree({
      ...referrers,
      'data/z/typo.yml': '$schema: /thing-2.yml\nname: t\n',
    });
    const problems = await problemsOf(root);
    expect(problems).toEqual([
      '/z/typo.yml: schema /thing-2.yml not found',
      ...[1, 2, 3, 4, 5, 6].map(
        (i) =>
          `/a${i}.yml: schema /thing-1.yml: /other $ref /z/typo.yml has $schema /thing-2.yml (not found), expected /thing-1.yml`,
      ),
    ]);
  });

  it('validates resources that declare a $schema, skipping templates that are not YAML', async () => {
    const root = await tree({
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
      'resources/bad.yml': '$schema: /other-1.yml\nsize: big\n',
      'resources/template.yml': '$schema: /other-1.yml\nsize: {{ size }\n',
    });
    expect(await problemsOf(root)).toEqual([
      '/bad.yml: schema /other-1.yml: /size must be integer',
    ]);
  });

  it('checks each schema against its meta-schema when the bundle has it', async () => {
    const root = await tree({
      'schemas/broken-1.yml': '$schema: /metaschema-1.json\ntype: object\n',
      'schemas/nometa-1.yml': 'type: object\n',
      'schemas/elsewhere-1.yml': '$schema: /nowhere.json\nproperties: {}\n',
      'schemas/draft-1.json': JSON.stringify({
        $schema: 'http://json-schema.org/draft-06/schema',
        minLength: -1,
      }),
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
    });
    expect(await problemsOf(root)).toEqual([
      "/broken-1.yml: meta-schema /metaschema-1.json: (root) is missing required property 'properties'",
      '/draft-1.json: meta-schema http://json-schema.org/draft-06/schema: /minLength must be >= 0',
      '/nometa-1.yml: the JSON schema has no $schema',
    ]);
  });

  it('refuses isUnique on complex fields and on types that are not top-level', async () => {
    const root = await tree({
      'graphql-schemas/schema.yml': `${SMALL_SCHEMA_YML}
- name: Inner_v1
  fields:
  - { name: key, type: string, isUnique: true }
  - { name: thing, type: Thing_v1, isUnique: true }
`,
      'data/a.yml': '$schema: /thing-1.yml\nname: a\n',
    });
    expect(await problemsOf(root)).toEqual([
      'graphql-schemas/schema.yml: Inner_v1.key: isUnique on a type that is not top-level',
      'graphql-schemas/schema.yml: Inner_v1.thing: isUnique on a field of object type Thing_v1',
      'graphql-schemas/schema.yml: Inner_v1.thing: isUnique on a type that is not top-level',
    ]);
  });

  it('refuses list items that repeat their context-unique fields', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': `
confs:
- name: Query
  fields:
  - { name: ns_v1, type: Ns_v1, isList: true, datafileSchema: /ns-1.yml }
- name: Ns_v1
  datafile: /ns-1.yml
  fields:
  - { name: items, type: Item_v1, isList: true, isInterface: true }
- name: Item_v1
  isInterface: true
  interfaceResolve: { strategy: fieldMap, field: provider, fieldMap: { a: ItemA_v1, b: ItemB_v1 } }
  fields:
  - { name: provider, type: string, isContextUnique: true }
- name: ItemA_v1
  interface: Item_v1
  fields:
  - { name: provider, type: string }
  - { name: path, type: string, isContextUnique: true }
- name: ItemB_v1
  interface: Item_v1
  fields:
  - { name: provider, type: string }
  - { name: name, type: string, isContextUnique: true }
`,
      'data/ns.yml': `$schema: /ns-1.yml
items:
- { provider: a, path: /x }
- { provider: b, name: x }
- { provider: a, path: /y }
- { provider: a, path: /x }
- { provider: b, name: x }
`,
    });
    roots.push(root);
    expect(await problemsOf(root)).toEqual([
      '/ns.yml: items: items [0], [3] repeat the same path, provider',
      '/ns.yml: items: items [1], [4] repeat the same name, provider',
    ]);
  });

  it('checks only crossrefs and types when the tree has no schemas/', async () => {
    const root = await writeTree({
      'graphql-schemas/schema.yml': SMALL_SCHEMA_YML,
      'data/a.yml': '$schema: /thing-1.yml\nname: a\nother: {$ref: /gone.yml}\nanything: goes\n',
    });
    roots.push(root);
    expect(await problemsOf(root)).toEqual(['/a.yml: other: $ref /gone.yml does not exist']);
    // validation can be switched off, as qontract-server never validates
    await expect(loadEmbeddedEngine(root, { git: false, validate: false })).resolves.toBeDefined();
  });
});
