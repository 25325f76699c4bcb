import { beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEngine, loadEmbeddedEngine } from './engine.ts';
import { BASIC_FIXTURE } from './test-support/tree.ts';
import type { EmbeddedEngine } from './types.ts';

let engine: EmbeddedEngine;
beforeAll(async () => {
  engine = await loadEmbeddedEngine(BASIC_FIXTURE, { git: false });
});

async function q(query: string, variables?: Record<string, unknown>) {
  return engine.execute(query, variables ?? null);
}

const PROD = '/openshift/prod-1/namespaces/app-a-prod.yml';
const STAGE = '/openshift/stage-1/namespaces/app-a-stage.yml';

describe('Query fields by datafileSchema', () => {
  it('lists the datafiles of the schema in path order, with path set from the key', async () => {
    const r = await q('{ clusters_v1 { path name } namespaces_v1 { path } }');
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      clusters_v1: [
        { path: '/openshift/prod-1/cluster.yml', name: 'prod-1' },
        { path: '/openshift/stage-1/cluster.yml', name: 'stage-1' },
      ],
      namespaces_v1: [{ path: PROD }, { path: STAGE }],
    });
  });

  it('filters by searchable fields and path with strict equality; null arguments are ignored', async () => {
    const r = await q(`{
      byName: clusters_v1(name: "stage-1") { name }
      nullName: clusters_v1(name: null) { name }
      byPath: namespaces_v1(path: "${STAGE}") { name }
      both: clusters_v1(name: "stage-1", path: "/openshift/prod-1/cluster.yml") { name }
      user: users_v1(org_username: "zoe") { name }
    }`);
    expect(r.data).toEqual({
      byName: [{ name: 'stage-1' }],
      nullName: [{ name: 'prod-1' }, { name: 'stage-1' }],
      byPath: [{ name: 'app-a-stage' }],
      both: [],
      user: [{ name: 'Zoe' }],
    });
  });

  it('rejects an argument for a field that is not searchable at validation', async () => {
    const { result, phase } = await engine.executeWithPhase(
      '{ namespaces_v1(name: "x") { name } }',
    );
    expect(phase).toBe('validate');
    expect(result.data).toBeUndefined();
    expect(result.errors?.[0]?.message).toBe(
      'Unknown argument "name" on field "Query.namespaces_v1".',
    );
    expect(result.extensions).toEqual({ schemas: [] });
  });
});

describe('filter argument', () => {
  const names = async (filter: string) => {
    const r = await q(`{ namespaces_v1(filter: ${filter}) { name } }`);
    expect(r.errors).toBeUndefined();
    return (r.data!.namespaces_v1 as { name: string }[]).map((n) => n.name);
  };

  it('matches plain values strictly, null matching a missing field', async () => {
    expect(await names('{ name: "app-a-prod" }')).toEqual(['app-a-prod']);
    expect(await names('{ delete: false }')).toEqual(['app-a-prod']);
    expect(await names('{ delete: null }')).toEqual(['app-a-stage']);
    expect(await names('{ name: "app-a-prod", delete: null }')).toEqual([]);
  });

  it('compares list fields element-wise', async () => {
    expect(await names('{ managedResourceTypes: ["ConfigMap"] }')).toEqual(['app-a-stage']);
    expect(await names('{ managedResourceTypes: ["ConfigMap", "Secret"] }')).toEqual([
      'app-a-prod',
    ]);
    expect(await names('{ managedResourceTypes: ["Secret", "ConfigMap"] }')).toEqual([]);
  });

  it('supports in and ne; ne: null means present and works on ref fields', async () => {
    expect(await names('{ name: { in: ["app-a-stage", "nope"] } }')).toEqual(['app-a-stage']);
    expect(await names('{ delete: { ne: null } }')).toEqual(['app-a-prod']);
    expect(await names('{ networkPoliciesAllow: { ne: null } }')).toEqual(['app-a-prod']);
    expect(await names('{ name: { ne: "app-a-prod" } }')).toEqual(['app-a-stage']);
  });

  it('never matches a ref field with a plain object; nested filter follows the ref', async () => {
    expect(await names('{ cluster: { name: "prod-1" } }')).toEqual([]);
    expect(await names('{ cluster: { filter: { name: "prod-1" } } }')).toEqual(['app-a-prod']);
    expect(await names('{ app: { filter: { parentApp: { ne: null } } } }')).toEqual([
      'app-a-stage',
    ]);
  });

  it('fans nested in/ne/filter out over lists with every; plain equality on a list never matches', async () => {
    expect(
      await names('{ networkPoliciesAllow: { filter: { name: { in: ["app-a-stage"] } } } }'),
    ).toEqual(['app-a-prod']);
    expect(await names('{ networkPoliciesAllow: { filter: { name: "app-a-stage" } } }')).toEqual(
      [],
    );
  });

  it('accepts the filter as a variable', async () => {
    const r = await q('query($f: JSON) { namespaces_v1(filter: $f) { name } }', {
      f: { cluster: { filter: { name: 'stage-1' } } },
    });
    expect(r.data).toEqual({ namespaces_v1: [{ name: 'app-a-stage' }] });
  });

  it('accepts fields of every fieldMap implementation on an interface', async () => {
    const r = await q('{ permissions_v1(filter: { org: "app-sre" }) { name } }');
    expect(r.data).toEqual({ permissions_v1: [{ name: 'github-team' }] });
  });

  it('fails with BAD_FILTER_FIELD for an unknown field, also when nested', async () => {
    const r = await q('{ namespaces_v1(filter: { bogus: 1 }) { name } }');
    expect(r.data).toEqual({ namespaces_v1: null });
    expect(r.errors).toEqual([
      expect.objectContaining({
        message: 'Field "bogus" does not exist on type "Namespace_v1"',
        path: ['namespaces_v1'],
        extensions: { code: 'BAD_FILTER_FIELD', gqlType: 'Namespace_v1' },
      }),
    ]);
    const nested = await q(
      '{ namespaces_v1(filter: { cluster: { filter: { nope: 1 } } }) { name } }',
    );
    expect(nested.errors?.[0]).toMatchObject({
      message: 'Field "nope" does not exist on type "Cluster_v1"',
      extensions: { code: 'BAD_FILTER_FIELD', gqlType: 'Cluster_v1' },
    });
  });

  it('checks a nested filter only when some object reaches it, as the server builds it then', async () => {
    // app-a-child's parent app-a has no parentApp: { nope: 1 } is never reached.
    const unreached = await q(
      '{ apps_v1(filter: { parentApp: { filter: { parentApp: { filter: { nope: 1 } } } } }) { name } }',
    );
    expect(unreached.errors).toBeUndefined();
    expect(unreached.data).toEqual({ apps_v1: [] });
  });

  it('matches nothing for a filter that is not an object, and reads an array by index', async () => {
    expect(await names('"cluster"')).toEqual([]);
    const r = await q('{ namespaces_v1(filter: [1]) { name } }');
    expect(r.errors?.[0]).toMatchObject({
      message: 'Field "0" does not exist on type "Namespace_v1"',
      extensions: { code: 'BAD_FILTER_FIELD', gqlType: 'Namespace_v1' },
    });
  });
});

describe('interfaces', () => {
  it('resolves fieldMap interfaces by the mapped field and prunes {} left by unmatched fragments', async () => {
    const r = await q(
      `{ roles_v1 { name permissions { ... on PermissionGithubOrgTeam_v1 { org team } } } }`,
    );
    expect(r.data).toEqual({
      roles_v1: [
        { name: 'dev', permissions: [] },
        { name: 'sre', permissions: [{ org: 'app-sre', team: 'sre' }] },
      ],
    });
  });

  it('resolves schema-strategy interfaces through datafile types, delegating to interfaces', async () => {
    const r = await q(`{ namespaces_v1(path: "${PROD}") {
      externalResources { __typename name ... on AWSAccount_v1 { uid } }
      owners { __typename path schema }
    } }`);
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      namespaces_v1: [
        {
          externalResources: {
            __typename: 'AWSAccount_v1',
            name: 'app-sre-aws',
            uid: '123456789012',
          },
          owners: [
            { __typename: 'App_v1', path: '/services/app-a/app.yml', schema: '/app-sre/app-1.yml' },
            {
              __typename: 'Cluster_v1',
              path: '/openshift/prod-1/cluster.yml',
              schema: '/openshift/cluster-1.yml',
            },
            {
              __typename: 'PermissionGithubOrgTeam_v1',
              path: '/access/permissions/github-team.yml',
              schema: '/access/permission-1.yml',
            },
          ],
        },
      ],
    });
  });

  it('makes datafile types implement DatafileObject_v1', () => {
    const t = engine.schema.getType('Cluster_v1');
    expect(t && 'getInterfaces' in t ? t.getInterfaces().map((i) => i.name) : []).toEqual([
      'DatafileObject_v1',
    ]);
    const impl = engine.schema.getType('PermissionGithubOrgTeam_v1');
    expect(impl && 'getInterfaces' in impl ? impl.getInterfaces().map((i) => i.name) : []).toEqual([
      'Permission_v1',
      'DatafileObject_v1',
    ]);
  });
});

describe('synthetic back-references', () => {
  it('lists the datafiles that reference this object at subAttr, in path order', async () => {
    const r = await q(`{
      roles_v1 { name users { org_username } }
      clusters_v1 { name namespaces { name } }
      apps_v1 { name namespaces { name } }
      permissions_v1 { name ... on PermissionGitlabGroupMembership_v1 { roles { name } } }
    }`);
    expect(r.data).toEqual({
      roles_v1: [
        { name: 'dev', users: [{ org_username: 'adam' }] },
        { name: 'sre', users: [{ org_username: 'adam' }, { org_username: 'zoe' }] },
      ],
      clusters_v1: [
        { name: 'prod-1', namespaces: [{ name: 'app-a-prod' }] },
        { name: 'stage-1', namespaces: [{ name: 'app-a-stage' }] },
      ],
      apps_v1: [
        { name: 'app-a', namespaces: [{ name: 'app-a-prod' }] },
        { name: 'app-a-child', namespaces: [{ name: 'app-a-stage' }] },
        { name: 'app-b', namespaces: [] },
      ],
      permissions_v1: [
        { name: 'github-team' },
        { name: 'gitlab-group', roles: [{ name: 'dev' }, { name: 'sre' }] },
      ],
    });
  });
});

describe('crossrefs', () => {
  it('resolves single refs and arrays of refs', async () => {
    const r = await q(
      `{ namespaces_v1 { cluster { name } app { name parentApp { name } } networkPoliciesAllow { name } } }`,
    );
    expect(r.data).toEqual({
      namespaces_v1: [
        {
          cluster: { name: 'prod-1' },
          app: { name: 'app-a', parentApp: null },
          networkPoliciesAllow: [{ name: 'app-a-stage' }],
        },
        {
          cluster: { name: 'stage-1' },
          app: { name: 'app-a-child', parentApp: { name: 'app-a' } },
          networkPoliciesAllow: null,
        },
      ],
    });
  });
});

describe('resources', () => {
  it('resolves resource path fields to Resource_v1', async () => {
    const r = await q(`{ namespaces_v1(path: "${PROD}") { openshiftResources {
      provider
      ... on NamespaceOpenshiftResourceResource_v1 { path { path schema sha256sum content } }
      ... on NamespaceOpenshiftResourceVaultSecret_v1 { secretPath: path version }
    } } }`);
    expect(r.errors).toBeUndefined();
    const items = (r.data!.namespaces_v1 as { openshiftResources: unknown[] }[])[0]!
      .openshiftResources;
    expect(items).toEqual([
      {
        provider: 'resource',
        path: {
          path: '/app-a/configmap.yml',
          schema: '/openshift/config-map-1.yml',
          sha256sum: expect.stringMatching(/^[0-9a-f]{64}$/),
          content: expect.stringContaining('kind: ConfigMap'),
        },
      },
      { provider: 'vault-secret', secretPath: 'app-sre/app-a/creds', version: 2 },
    ]);
  });

  it('lists resources by path (which wins), by schema, or all', async () => {
    const r = await q(`{
      all: resources_v1 { path }
      bySchema: resources_v1(schema: "/openshift/config-map-1.yml") { path }
      byPath: resources_v1(path: "/app-a/notes.txt", schema: "/openshift/config-map-1.yml") { path content }
    }`);
    expect(r.data).toEqual({
      all: [
        { path: '/app-a/configmap.yml' },
        { path: '/app-a/notes.txt' },
        { path: '/app-a/route.yml' },
      ],
      bySchema: [{ path: '/app-a/configmap.yml' }],
      byPath: [{ path: '/app-a/notes.txt', content: 'plain text resource\n' }],
    });
  });

  it('gives a non-null error for a missing path', async () => {
    const r = await q('{ resources_v1(path: "/nope.yml") { path } }');
    expect(r.data).toBeNull();
    expect(r.errors?.[0]?.message).toBe(
      'Cannot return null for non-nullable field Query.resources_v1.',
    );
  });

  it('exposes backrefs, whose declared type field the bundler never writes', async () => {
    const ok = await q(
      '{ resources_v1(path: "/app-a/configmap.yml") { backrefs { path jsonpath datafileSchema } } }',
    );
    expect(ok.data).toEqual({
      resources_v1: [
        {
          backrefs: [
            {
              path: PROD,
              jsonpath: 'openshiftResources.[0].path',
              datafileSchema: '/openshift/namespace-1.yml',
            },
          ],
        },
      ],
    });
    const typed = await q('{ resources_v1(path: "/app-a/configmap.yml") { backrefs { type } } }');
    expect(typed.errors?.[0]?.message).toBe(
      'Cannot return null for non-nullable field ResourceBackref_v1.type.',
    );
  });
});

describe('scalars', () => {
  it('returns JSON fields as JSON text with the bundle key order', async () => {
    const r = await q(
      '{ clusters_v1(name: "prod-1") { labels } namespaces_v1(path: "' +
        PROD +
        '") { labels extra } }',
    );
    expect(r.data).toEqual({
      clusters_v1: [{ labels: '{"2":"two","10":"ten","alpha":"a","zone":"b"}' }],
      namespaces_v1: [
        {
          labels: '{"env":"prod","team":"a"}',
          // a JSON field is returned raw: refs inside it stay unresolved
          extra: '{"mixed":[{"$ref":"/services/app-a/app.yml"},"plain"]}',
        },
      ],
    });
  });

  it('serves YAML 1.1 values as typed GraphQL scalars', async () => {
    const r = await q(
      `{ namespaces_v1(path: "${PROD}") { replicas ratio delete } clusters_v1 { internal } }`,
    );
    expect(r.data).toEqual({
      namespaces_v1: [{ replicas: 8, ratio: 1.5, delete: false }],
      clusters_v1: [{ internal: false }, { internal: true }],
    });
  });
});

describe('extensions.schemas', () => {
  it('lists $schemas of objects read through the default resolver, first encounter first', async () => {
    const r = await q(
      `{ namespaces_v1 { cluster { name disable { integrations } } app { name } } }`,
    );
    expect(r.extensions).toEqual({
      schemas: [
        '/openshift/namespace-1.yml',
        '/openshift/cluster-1.yml',
        '/openshift/cluster-integrations-1.yml',
        '/app-sre/app-1.yml',
      ],
    });
  });

  it('does not record objects reached only through list, synthetic or resource fields', async () => {
    const roles = await q('{ roles_v1 { users { org_username } } }');
    expect(roles.extensions).toEqual({ schemas: ['/access/user-1.yml'] });
    const withName = await q('{ roles_v1 { name users { org_username } } }');
    expect(withName.extensions).toEqual({ schemas: ['/access/role-1.yml', '/access/user-1.yml'] });
    const typename = await q('{ clusters_v1 { __typename } }');
    expect(typename.extensions).toEqual({ schemas: [] });
  });

  it('records resources that carry a $schema, and not inline objects without one', async () => {
    const r = await q(
      '{ resources_v1 { path } namespaces_v1 { openshiftResources { provider } } }',
    );
    expect(r.extensions).toEqual({
      schemas: ['/openshift/config-map-1.yml', '/openshift/namespace-1.yml'],
    });
  });

  it('is present, empty, when nothing was read', async () => {
    const r = await q('{ clusters_v1(name: "none") { name } }');
    expect(r).toEqual({ data: { clusters_v1: [] }, extensions: { schemas: [] } });
  });
});

describe('execution phases', () => {
  it('tells parse errors from execution errors', async () => {
    const parse = await engine.executeWithPhase('{ clusters_v1 { name }');
    expect(parse.phase).toBe('parse');
    expect(parse.result.errors?.[0]?.message).toMatch(/^Syntax Error/);
    const exec = await engine.executeWithPhase('{ resources_v1(path: "/x") { path } }');
    expect(exec.phase).toBe('execute');
    const badVariable = await engine.executeWithPhase(
      'query($n: String!) { clusters_v1(name: $n) { name } }',
    );
    expect(badVariable.phase).toBe('request');
  });
});

describe('memoize', () => {
  it('answers a request asked before with the same frozen result; other requests afresh', async () => {
    const memo = createEmbeddedEngine(engine.bundle!, engine.sha256, 'memo', { memoize: true });
    const query = '{ clusters_v1 { name } }';
    const first = await memo.execute(query, null);
    expect(await memo.execute(query, null)).toBe(first);
    expect(first.data).toEqual((await engine.execute(query, null)).data);
    // Frozen all the way down: one reader cannot change what the next one gets.
    const clusters = (first.data as { clusters_v1: Array<{ name: string }> }).clusters_v1;
    expect(() => {
      clusters[0]!.name = 'changed';
    }).toThrow(TypeError);
    const named = await memo.execute('query($n: String) { clusters_v1(name: $n) { name } }', {
      n: 'prod-1',
    });
    expect(named).not.toBe(first);
    // Without the option, every request gets its own result.
    expect(await engine.execute(query, null)).not.toBe(await engine.execute(query, null));
  });

  it('takes a document with its only operation named or not as one request', async () => {
    const memo = createEmbeddedEngine(engine.bundle!, engine.sha256, 'memo', { memoize: true });
    const query = 'query Clusters { clusters_v1 { name } }';
    const unnamed = await memo.execute(query, null);
    expect(await memo.execute(query, null, 'Clusters')).toBe(unnamed);
    // With two operations the name chooses: two requests, two answers.
    const two = 'query A { clusters_v1 { name } } query B { namespaces_v1 { name } }';
    const a = await memo.execute(two, null, 'A');
    const b = await memo.execute(two, null, 'B');
    expect(a.data).toHaveProperty('clusters_v1');
    expect(b.data).toHaveProperty('namespaces_v1');
    // An operation the document does not have is an error, not the document's other answer.
    const unknown = await memo.execute(query, null, 'Other');
    expect(unknown.errors?.[0]?.message).toMatch(/Other/);
  });
});
