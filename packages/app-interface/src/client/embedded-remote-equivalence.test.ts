import { fileURLToPath } from 'node:url';
import { DEFAULT_GLOBAL_OPTIONS, loadConfig, silentLogger } from '@qontract/core';
import { print } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEmbeddedEngine, startBundleServer } from '../embedded/index.ts';
import { createGqlClient } from './client.ts';
import { createRemoteTransport } from './remote-transport.ts';
import { TestNamespacesWithResourcesDocument } from './test-support/namespaces-with-resources.generated.ts';
import { TestRolesWithMembersDocument } from './test-support/roles-with-members.generated.ts';

const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url));
const engine = await loadEmbeddedEngine(`${EXAMPLES}app-interface`);
const server = await startBundleServer(engine, { port: 0, host: '127.0.0.1' });
afterAll(() => server.close());

const globals = { ...DEFAULT_GLOBAL_OPTIONS, configPath: '', gqlUrlPrint: false };
const documents = [TestNamespacesWithResourcesDocument, TestRolesWithMembersDocument] as const;

describe('embedded and remote backends', () => {
  it('return identical data and extensions.schemas for the same query', async () => {
    const remote = await createRemoteTransport({
      server: `${server.url}/graphql`,
      pinToCurrentBundle: true,
      log: silentLogger(),
    });
    expect(remote.sha).toBe(engine.sha256);
    for (const document of documents) {
      const text = print(document);
      const direct = await engine.execute(text);
      const overHttp = await remote.execute(text, undefined, 'test');
      expect(direct.errors).toBeUndefined();
      expect(overHttp.data).toEqual(direct.data);
      expect(overHttp.extensions?.schemas).toEqual(direct.extensions?.schemas);
      expect(direct.extensions?.schemas?.length).toBeGreaterThan(0);
    }
  });

  it('give the same typed, shape-checked results through the client', async () => {
    const config = await loadConfig(`${EXAMPLES}config.toml`);
    // The test query reads more than any one integration may: no allow-list here.
    const unchecked = { ...globals, validateSchemas: false };
    const embedded = await createGqlClient(
      config,
      unchecked,
      'openshift-resources',
      silentLogger(),
    );
    const remote = await createGqlClient(
      { ...config, graphql: { server: `${server.url}/graphql` } },
      unchecked,
      'openshift-resources',
      silentLogger(),
    );
    expect(embedded.endpoint).toBe(`file://${EXAMPLES}app-interface`);
    expect(embedded.sha).toBe(remote.sha);
    expect(embedded.gitCommit).toEqual(remote.gitCommit);
    const fromEmbedded = await embedded.query(TestNamespacesWithResourcesDocument);
    const fromRemote = await remote.query(TestNamespacesWithResourcesDocument);
    expect(fromRemote).toEqual(fromEmbedded);
    expect([...remote.queriedSchemas]).toEqual([...embedded.queriedSchemas]);
    const stage = fromEmbedded.namespaces?.find((n) => n.name === 'example-app-stage');
    expect(stage?.cluster.automationToken).toEqual({
      path: 'clusters/appint-ex-01',
      field: 'token',
      version: null,
      format: null,
    });
    expect(JSON.parse(stage?.labels ?? 'null')).toEqual({ environment: 'stage', team: 'example' });
    expect(stage?.openshiftResources?.map((r) => r.provider)).toEqual([
      'resource',
      'resource',
      'resource-template',
      'resource-template',
      'resource-template',
      'vault-secret',
      'route',
      'prometheus-rule',
    ]);
  });

  it('enforce the example allow-lists: the roles query is forbidden to openshift-namespaces', async () => {
    const config = await loadConfig(`${EXAMPLES}config.toml`);
    const gql = await createGqlClient(config, globals, 'openshift-namespaces', silentLogger());
    await expect(gql.query(TestRolesWithMembersDocument)).rejects.toMatchObject({
      exitCode: 5,
      schemas: ['/access/role-1.yml', '/access/user-1.yml', '/access/bot-1.yml'],
    });
  });
});
