import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createEmbeddedEngine } from './engine.ts';
import { graphqlSchemaFromSchemaYml } from './index.ts';
import { BASIC_FIXTURE } from './test-support/tree.ts';

const schemaYml = readFileSync(join(BASIC_FIXTURE, 'graphql-schemas/schema.yml'), 'utf8');

describe('graphqlSchemaFromSchemaYml', () => {
  const sdl = printSchema(graphqlSchemaFromSchemaYml(schemaYml));

  it('gives Query fields searchable, path and filter arguments in that order', () => {
    expect(sdl).toContain('clusters_v1(name: String, path: String, filter: JSON): [Cluster_v1!]');
    expect(sdl).toContain('namespaces_v1(path: String, filter: JSON): [Namespace_v1!]');
    expect(sdl).toContain('permissions_v1(path: String, filter: JSON): [Permission_v1!]!');
    expect(sdl).toContain('resources_v1(path: String, schema: String): [Resource_v1!]!');
  });

  it('wraps lists as [T!] and required fields with !, maps scalars and JSON', () => {
    expect(sdl).toContain('managedGroups: [String!]');
    expect(sdl).toContain('cluster: Cluster_v1!');
    expect(sdl).toContain('labels: JSON');
    expect(sdl).toContain('replicas: Int');
    expect(sdl).toContain('ratio: Float');
    expect(sdl).toContain('delete: Boolean');
    expect(sdl).toContain('scalar JSON');
  });

  it('types resource paths as nullable Resource_v1 and implements interfaces', () => {
    expect(sdl).toMatch(
      /type NamespaceOpenshiftResourceResource_v1 implements NamespaceOpenshiftResource_v1 \{\n {2}provider: String!\n {2}path: Resource_v1\n\}/,
    );
    expect(sdl).toContain('type Cluster_v1 implements DatafileObject_v1 {');
    expect(sdl).toContain(
      'type AWSAccount_v1 implements ExternalResourcesProvisioner_v1 & DatafileObject_v1 {',
    );
    // As qontract-server: an interface that is a datafile type implements DatafileObject_v1.
    expect(sdl).toContain('interface Permission_v1 implements DatafileObject_v1 {');
  });

  it('accepts the legacy bare-list form', () => {
    const legacy = '- name: Query\n  fields:\n  - { name: x, type: string }\n';
    expect(printSchema(graphqlSchemaFromSchemaYml(legacy))).toContain(
      'type Query {\n  x: String\n}',
    );
  });

  it('names what is wrong with a broken schema.yml', () => {
    expect(() => graphqlSchemaFromSchemaYml('confs: [{ name: Foo, fields: [] }]')).toThrow(
      'schema.yml defines no type named "Query"',
    );
    expect(() =>
      graphqlSchemaFromSchemaYml('confs: [{ name: Query, fields: [{ name: a, type: Nope_v1 }] }]'),
    ).toThrow('Query.a: unknown object type "Nope_v1"');
    expect(() => graphqlSchemaFromSchemaYml('confs: [{ fields: [] }]')).toThrow(
      /schema\.yml: not a GraphQL type description: .*name/,
    );
  });
});

describe('DatafileObject_v1 (qontract-server test/datafileobject)', () => {
  // An interface mapped to a datafile schema (like Permission_v1) with fieldMap implementations.
  const str = (name: string) => ({ name, type: 'string', isRequired: true });
  const bundle = {
    data: {
      '/beer/ale.yml': { $schema: '/dish-1.yml', provider: 'beer', name: 'ale', brewery: 'B' },
      '/cake/tart.yml': { $schema: '/dish-1.yml', provider: 'cake', name: 'tart', baker: 'G' },
      '/menu.yml': {
        $schema: '/menu-1.yml',
        name: 'menu',
        dishes: [{ $ref: '/cake/tart.yml' }, { $ref: '/beer/ale.yml' }],
        files: [{ $ref: '/cake/tart.yml' }, { $ref: '/menu.yml' }],
      },
    },
    resources: {},
    schemas: {},
    graphql: {
      confs: [
        {
          name: 'DatafileObject_v1',
          isInterface: true,
          interfaceResolve: { strategy: 'schema' as const },
          fields: [str('path'), str('schema')],
        },
        {
          name: 'Dish_v1',
          datafile: '/dish-1.yml',
          isInterface: true,
          interfaceResolve: {
            strategy: 'fieldMap' as const,
            field: 'provider',
            fieldMap: { cake: 'Cake_v1', beer: 'Beer_v1' },
          },
          fields: [str('path'), str('schema'), str('name'), str('provider')],
        },
        {
          name: 'Cake_v1',
          interface: 'Dish_v1',
          fields: [str('path'), str('schema'), str('name'), str('provider'), str('baker')],
        },
        {
          name: 'Beer_v1',
          interface: 'Dish_v1',
          fields: [str('path'), str('schema'), str('name'), str('provider'), str('brewery')],
        },
        {
          name: 'Menu_v1',
          datafile: '/menu-1.yml',
          fields: [
            str('path'),
            str('schema'),
            str('name'),
            { name: 'dishes', type: 'Dish_v1', isInterface: true, isList: true },
            { name: 'files', type: 'DatafileObject_v1', isInterface: true, isList: true },
          ],
        },
        {
          name: 'Query',
          fields: [
            { name: 'menus_v1', type: 'Menu_v1', isList: true, datafileSchema: '/menu-1.yml' },
          ],
        },
      ],
    },
  };
  const engine = createEmbeddedEngine(bundle, 'c'.repeat(64));
  const sdl = printSchema(engine.schema);

  it('makes an interface mapped to a datafile implement DatafileObject_v1, and its implementations too', () => {
    expect(sdl).toContain('interface Dish_v1 implements DatafileObject_v1 {');
    expect(sdl).toContain('type Cake_v1 implements Dish_v1 & DatafileObject_v1 {');
    expect(sdl).toContain('type Menu_v1 implements DatafileObject_v1 {');
    expect(sdl).toContain('interface DatafileObject_v1 {');
  });

  it('answers introspection and resolves both interfaces as the server does', async () => {
    const r = await engine.execute(`{
      t: __type(name: "Dish_v1") { interfaces { name } possibleTypes { name } }
      menus_v1 {
        dishes { path schema ... on Cake_v1 { baker } ... on Beer_v1 { brewery } }
        files { path schema ... on Dish_v1 { name } }
      }
    }`);
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      t: {
        interfaces: [{ name: 'DatafileObject_v1' }],
        possibleTypes: [{ name: 'Cake_v1' }, { name: 'Beer_v1' }],
      },
      menus_v1: [
        {
          dishes: [
            { path: '/cake/tart.yml', schema: '/dish-1.yml', baker: 'G' },
            { path: '/beer/ale.yml', schema: '/dish-1.yml', brewery: 'B' },
          ],
          files: [
            { path: '/cake/tart.yml', schema: '/dish-1.yml', name: 'tart' },
            { path: '/menu.yml', schema: '/menu-1.yml' },
          ],
        },
      ],
    });
  });
});
