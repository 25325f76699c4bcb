import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
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
    expect(sdl).toContain('interface Permission_v1 {');
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
