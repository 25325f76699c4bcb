import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postprocessBundle } from './postprocess.ts';
import type { Bundle, GraphqlTypeConf, JsonObject } from './types.ts';
import { keysInDocumentOrder, parseYaml11 } from './yaml11.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const RESOURCE_REF = { $ref: '/common-1.json#/definitions/resourceref' };
const IDENTIFIER_SCHEMA = { type: 'string' };

function bundleOf(parts: {
  schemas: Record<string, JsonObject>;
  confs: GraphqlTypeConf[];
  data: string;
  resources?: string[];
}): Bundle {
  return {
    schemas: parts.schemas,
    graphql: { confs: parts.confs },
    data: parseYaml11(parts.data) as Record<string, JsonObject>,
    resources: Object.fromEntries(
      (parts.resources ?? []).map((p) => [
        p,
        { path: p, content: '', sha256sum: '', $schema: null, backrefs: [] },
      ]),
    ),
  };
}

/** Runs the post-processing with the data files in the order the YAML lists them. */
function run(bundle: Bundle): Bundle {
  postprocessBundle(bundle, keysInDocumentOrder(bundle.data));
  return bundle;
}

const query = (type: string, schema: string) => ({
  name: 'Query',
  fields: [{ name: 'q', type, isList: true, datafileSchema: schema }],
});

describe('backrefs (qontract-validator postprocess)', () => {
  const schemas: Record<string, JsonObject> = {
    '/thing-1.yml': {
      properties: {
        zebra: RESOURCE_REF,
        apple: { type: 'object', properties: { nested: RESOURCE_REF } },
        items: { type: 'array', items: { $ref: '/item-1.yml' } },
        plain: { type: 'string' },
      },
    },
    '/item-1.yml': {
      properties: { kind: { type: 'string' } },
      oneOf: [
        { properties: { kind: { enum: ['file'] }, path: RESOURCE_REF } },
        { properties: { kind: { enum: ['text'] }, path: { type: 'string' } } },
      ],
    },
  };
  const confs: GraphqlTypeConf[] = [
    {
      name: 'Thing_v1',
      fields: [
        { name: 'zebra', type: 'string' },
        { name: 'apple', type: 'Apple_v1' },
        { name: 'items', type: 'Item_v1', isList: true, isInterface: true },
        { name: 'plain', type: 'string', isResource: true },
      ],
    },
    { name: 'Apple_v1', fields: [{ name: 'nested', type: 'string' }] },
    {
      name: 'Item_v1',
      isInterface: true,
      interfaceResolve: {
        strategy: 'fieldMap',
        field: 'kind',
        fieldMap: { file: 'FileItem_v1', text: 'TextItem_v1' },
      },
      fields: [{ name: 'kind', type: 'string' }],
    },
    { name: 'FileItem_v1', interface: 'Item_v1', fields: [{ name: 'path', type: 'string' }] },
    { name: 'TextItem_v1', interface: 'Item_v1', fields: [{ name: 'path', type: 'string' }] },
    query('Thing_v1', '/thing-1.yml'),
  ];

  it('follows the JSON schema (resourceref), in walk order: files as read, keys as written', () => {
    const bundle = run(
      bundleOf({
        schemas,
        confs,
        resources: ['/r.yml', '/unused.yml'],
        data: `
/b.yml:
  $schema: /thing-1.yml
  zebra: /r.yml
  apple: { nested: /r.yml }
  items:
  - { kind: file, path: /r.yml }
  - { kind: text, path: /r.yml }
  - { kind: file, path: /r.yml }
  plain: /r.yml
/a.yml:
  $schema: /thing-1.yml
  zebra: /r.yml
`,
      }),
    );
    // zebra before apple (document order, not code-point order); /b.yml before /a.yml (read
    // order); the oneOf branch picked by the fieldMap field's enum; `plain` is isResource in
    // GraphQL only, which the bundler does not look at.
    expect(bundle.resources['/r.yml']!.backrefs).toEqual([
      { path: '/b.yml', datafileSchema: '/thing-1.yml', jsonpath: 'zebra' },
      { path: '/b.yml', datafileSchema: '/thing-1.yml', jsonpath: 'apple.nested' },
      { path: '/b.yml', datafileSchema: '/thing-1.yml', jsonpath: 'items.[0].path' },
      { path: '/b.yml', datafileSchema: '/thing-1.yml', jsonpath: 'items.[2].path' },
      { path: '/a.yml', datafileSchema: '/thing-1.yml', jsonpath: 'zebra' },
    ]);
    expect(bundle.resources['/unused.yml']!.backrefs).toEqual([]);
  });

  it('falls back to GraphQL isResource fields when the bundle has no JSON schemas at all', () => {
    const bundle = run(
      bundleOf({
        schemas: {},
        confs,
        resources: ['/r.yml'],
        data: '/a.yml: { $schema: /thing-1.yml, zebra: /r.yml, plain: /r.yml }',
      }),
    );
    expect(bundle.resources['/r.yml']!.backrefs).toEqual([
      { path: '/a.yml', datafileSchema: '/thing-1.yml', jsonpath: 'plain' },
    ]);
  });
});

describe('__identifier (qontract-validator postprocess)', () => {
  it('hashes the context-unique fields of list items and adds __identifier to their schema', () => {
    const bundle = run(
      bundleOf({
        schemas: {
          '/s-1.yml': {
            properties: {
              list: {
                type: 'array',
                items: {
                  additionalProperties: false,
                  properties: { name: { type: 'string' }, ns: {}, other: { type: 'string' } },
                },
              },
            },
          },
          '/ns-1.yml': { properties: { name: { type: 'string' } } },
        },
        confs: [
          {
            name: 'S_v1',
            fields: [{ name: 'list', type: 'Item_v1', isList: true }],
          },
          {
            name: 'Item_v1',
            fields: [
              { name: 'name', type: 'string', isContextUnique: true },
              { name: 'ns', type: 'Ns_v1', isUnique: true },
              { name: 'other', type: 'string' },
            ],
          },
          { name: 'Ns_v1', datafile: '/ns-1.yml', fields: [{ name: 'name', type: 'string' }] },
          query('S_v1', '/s-1.yml'),
        ],
        data: `
/s.yml:
  $schema: /s-1.yml
  list:
  - { other: x, name: a, ns: { $ref: /ns.yml } }
  - { other: y }
/ns.yml: { $schema: /ns-1.yml, name: n }
`,
      }),
    );
    const list = bundle.data['/s.yml']!.list as JsonObject[];
    // Both fields of the item: `name` directly, `ns` through its $ref; keys sorted, compact.
    expect(list[0]!.__identifier).toBe(sha('{"name":"a","ns":{"$ref":"/ns.yml"}}'));
    // An item without any of them gets none.
    expect(list[1]).toEqual({ other: 'y' });
    const items = (bundle.schemas['/s-1.yml']!.properties as JsonObject).list as JsonObject;
    expect((items.items as JsonObject).properties).toMatchObject({
      __identifier: IDENTIFIER_SCHEMA,
    });
    // A referenced file is not changed by a ref field inside an item.
    expect(bundle.data['/ns.yml']).not.toHaveProperty('__identifier');
  });

  it('writes the identifier of a list of crossrefs into the referenced datafiles', () => {
    const bundle = run(
      bundleOf({
        schemas: {
          '/s-1.yml': { properties: { refs: { type: 'array', items: {} } } },
          '/t-1.yml': { properties: { key: { type: 'string' } } },
        },
        confs: [
          { name: 'S_v1', fields: [{ name: 'refs', type: 'T_v1', isList: true }] },
          {
            name: 'T_v1',
            datafile: '/t-1.yml',
            fields: [
              { name: 'key', type: 'string', isContextUnique: true },
              { name: 'free', type: 'string' },
            ],
          },
          query('S_v1', '/s-1.yml'),
        ],
        data: `
/s.yml: { $schema: /s-1.yml, refs: [{ $ref: /t.yml }, { $ref: /missing.yml }] }
/t.yml: { $schema: /t-1.yml, key: k, free: f }
`,
      }),
    );
    expect(bundle.data['/t.yml']!.__identifier).toBe(sha('{"key":"k"}'));
    expect(bundle.schemas['/t-1.yml']!.properties).toMatchObject({
      __identifier: IDENTIFIER_SCHEMA,
    });
    expect(bundle.data['/s.yml']!.refs).toEqual([{ $ref: '/t.yml' }, { $ref: '/missing.yml' }]);
  });

  it('adds __identifier to every oneOf branch when the branch is not known', () => {
    const branch = (extra: string) => ({
      additionalProperties: false,
      properties: { name: { type: 'string' }, [extra]: { type: 'string' } },
    });
    const bundle = run(
      bundleOf({
        schemas: {
          '/s-1.yml': {
            properties: { list: { type: 'array', items: { oneOf: [branch('a'), branch('b')] } } },
          },
        },
        confs: [
          { name: 'S_v1', fields: [{ name: 'list', type: 'Item_v1', isList: true }] },
          {
            name: 'Item_v1',
            fields: [
              { name: 'name', type: 'string', isContextUnique: true },
              { name: 'a', type: 'string' },
              { name: 'b', type: 'string' },
            ],
          },
          query('S_v1', '/s-1.yml'),
        ],
        data: '/s.yml: { $schema: /s-1.yml, list: [{ name: x, a: a }, { name: x, b: b }] }',
      }),
    );
    const list = bundle.data['/s.yml']!.list as JsonObject[];
    expect(list.map((i) => i.__identifier)).toEqual([sha('{"name":"x"}'), sha('{"name":"x"}')]);
    const props = (bundle.schemas['/s-1.yml']!.properties as JsonObject).list as JsonObject;
    for (const b of (props.items as JsonObject).oneOf as JsonObject[]) {
      expect(b.properties).toMatchObject({ __identifier: IDENTIFIER_SCHEMA });
    }
  });
});
