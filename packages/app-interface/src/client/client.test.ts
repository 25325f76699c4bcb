import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  configFromObject,
  DEFAULT_GLOBAL_OPTIONS,
  ExitCode,
  ForbiddenSchemaError,
  type GlobalOptions,
  IntegrationNotFoundError,
  type RunContext,
  silentLogger,
} from '@qontract/core';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createGqlClient } from './client.ts';
import { GqlQueryError } from './errors.ts';
import { appInterfaceSettings, getResource, parseJsonScalar } from './helpers.ts';
import { AppInterfaceSettingsDocument } from './queries/app-interface-settings.generated.ts';
import { dumpQueriedSchemas, gqlClient, queriedSchemas } from './run-client.ts';
import type { GqlTransport, GraphqlResponse } from './types.ts';

const INTEGRATION_SCHEMA = '/app-sre/integration-1.yml';
const SETTINGS_SCHEMA = '/app-interface/app-interface-settings-1.yml';

/** Answers by operation name; records what was asked. */
function fakeTransport(
  answers: Record<string, GraphqlResponse>,
): GqlTransport & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    endpoint: 'http://qs.example.com/graphqlsha/abc',
    sha: 'abc',
    gitCommit: null,
    async execute(_query, _variables, operation) {
      asked.push(operation);
      const answer = answers[operation];
      if (!answer) throw new Error(`unexpected query ${operation}`);
      return answer;
    },
    async close() {},
  };
}

const allowList = (schemas: string[] | null): GraphqlResponse => ({
  data: {
    integrations: [
      { name: 'other', description: 'x', schemas: ['/x-1.yml'] },
      ...(schemas ? [{ name: 'openshift-namespaces', description: 'd', schemas }] : []),
    ],
  },
  extensions: { schemas: [INTEGRATION_SCHEMA] },
});

const settings = (schemas: string[], vault = false): GraphqlResponse => ({
  data: { settings: [{ vault, repoUrl: 'https://x', kubeBinary: 'oc', hashLength: 7 }] },
  extensions: { schemas },
});

const config = configFromObject({ graphql: { server: 'https://qs.example.com/graphql' } });
const globals = { ...DEFAULT_GLOBAL_OPTIONS, configPath: '' };

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

describe('createGqlClient: schema allow-list', () => {
  it('ends the run with exit 4 when the integration is not in integrations_v1', async () => {
    const e = await failure(
      createGqlClient(config, globals, 'openshift-namespaces', silentLogger(), {
        transport: fakeTransport({ IntegrationsSchemas: allowList(null) }),
      }),
    );
    expect(e).toBeInstanceOf(IntegrationNotFoundError);
    expect((e as IntegrationNotFoundError).exitCode).toBe(ExitCode.INTEGRATION_NOT_FOUND);
    expect(e.message).toBe(
      'Integration not found: openshift-namespaces\n\nIntegration should be defined in App-Interface with the\n/app-sre/integration-1.yml schema.',
    );
  });

  it('treats an entry with no schemas as missing', async () => {
    await expect(
      createGqlClient(config, globals, 'openshift-namespaces', silentLogger(), {
        transport: fakeTransport({ IntegrationsSchemas: allowList([]) }),
      }),
    ).rejects.toBeInstanceOf(IntegrationNotFoundError);
  });

  it('ends the run with exit 5 naming the schemas a response reports outside the list', async () => {
    const gql = await createGqlClient(config, globals, 'openshift-namespaces', silentLogger(), {
      transport: fakeTransport({
        IntegrationsSchemas: allowList(['/openshift/namespace-1.yml']),
        AppInterfaceSettings: settings([
          SETTINGS_SCHEMA,
          '/openshift/namespace-1.yml',
          '/access/user-1.yml',
        ]),
      }),
    });
    const e = await failure(gql.query(AppInterfaceSettingsDocument));
    expect(e).toBeInstanceOf(ForbiddenSchemaError);
    expect((e as ForbiddenSchemaError).exitCode).toBe(ExitCode.FORBIDDEN_SCHEMA);
    expect(e.message).toBe(
      "Forbidden schemas: ['/app-interface/app-interface-settings-1.yml', '/access/user-1.yml']\n\n" +
        'The `schemas` parameter in the integration file in App-Interface\nshould be updated to include these schemas.',
    );
    // Recorded before the check, as the original does, so --dump-schemas shows them.
    expect([...gql.queriedSchemas]).toEqual([
      INTEGRATION_SCHEMA,
      SETTINGS_SCHEMA,
      '/openshift/namespace-1.yml',
      '/access/user-1.yml',
    ]);
  });

  it('lets allowed schemas and skipValidation queries through', async () => {
    const gql = await createGqlClient(config, globals, 'openshift-namespaces', silentLogger(), {
      transport: fakeTransport({
        IntegrationsSchemas: allowList([SETTINGS_SCHEMA]),
        AppInterfaceSettings: settings([SETTINGS_SCHEMA]),
      }),
    });
    await expect(gql.query(AppInterfaceSettingsDocument)).resolves.toMatchObject({
      settings: [{ vault: false }],
    });
    const other = await createGqlClient(config, globals, 'openshift-namespaces', silentLogger(), {
      transport: fakeTransport({
        IntegrationsSchemas: allowList(['/openshift/namespace-1.yml']),
        AppInterfaceSettings: settings([SETTINGS_SCHEMA]),
      }),
    });
    await expect(
      other.query(AppInterfaceSettingsDocument, undefined, { skipValidation: true }),
    ).resolves.toBeDefined();
  });

  it('neither loads nor checks the list with --no-validate-schemas', async () => {
    const transport = fakeTransport({ AppInterfaceSettings: settings(['/anything-1.yml']) });
    const gql = await createGqlClient(
      config,
      { ...globals, validateSchemas: false },
      'openshift-namespaces',
      silentLogger(),
      { transport },
    );
    await gql.query(AppInterfaceSettingsDocument);
    expect(transport.asked).toEqual(['AppInterfaceSettings']);
    expect([...gql.queriedSchemas]).toEqual(['/anything-1.yml']);
  });
});

describe('createGqlClient: responses', () => {
  it('names the operation and the path of data that does not match the query', async () => {
    const gql = await createGqlClient(config, globals, undefined, silentLogger(), {
      transport: fakeTransport({
        AppInterfaceSettings: {
          data: { settings: [{ vault: 'no', repoUrl: 'x', kubeBinary: 'oc', hashLength: 7 }] },
          extensions: { schemas: [] },
        },
      }),
    });
    const e = await failure(gql.query(AppInterfaceSettingsDocument));
    expect(e).toBeInstanceOf(GqlQueryError);
    expect(e.message).toBe(
      'GraphQL query AppInterfaceSettings failed: unexpected data at settings[0].vault: expected Boolean!, got a string',
    );
  });

  it('turns GraphQL errors and missing data into errors naming the operation', async () => {
    const gql = await createGqlClient(config, globals, undefined, silentLogger(), {
      transport: fakeTransport({
        AppInterfaceSettings: { data: null, errors: [{ message: 'boom', path: ['settings'] }] },
      }),
    });
    await expect(gql.query(AppInterfaceSettingsDocument)).rejects.toThrow(
      'GraphQL query AppInterfaceSettings failed: `errors` returned with the response: boom (at settings)',
    );
  });

  it('logs the endpoint with --gql-url-print only', async () => {
    const lines: string[] = [];
    const log = pino({}, { write: (l: string) => lines.push(l) });
    const transport = fakeTransport({});
    await createGqlClient(config, globals, undefined, log, { transport });
    await createGqlClient(config, { ...globals, gqlUrlPrint: false }, undefined, log, {
      transport,
    });
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual([
      'using gql endpoint http://qs.example.com/graphqlsha/abc',
    ]);
  });
});

describe('createGqlClient: shared answers', () => {
  const answer = (vault: unknown): GraphqlResponse => ({
    data: { settings: [{ vault, repoUrl: 'x', kubeBinary: 'oc', hashLength: 7 }] },
    extensions: { schemas: [] },
  });
  const clientOf = (response: GraphqlResponse) =>
    createGqlClient(config, globals, undefined, silentLogger(), {
      transport: { ...fakeTransport({}), execute: async () => response },
    });

  it('checks a frozen answer that does not match every time it is asked', async () => {
    const bad = Object.freeze(answer('no'));
    Object.freeze(bad.data);
    const gql = await clientOf(bad);
    await expect(gql.query(AppInterfaceSettingsDocument)).rejects.toThrow(/settings\[0\]\.vault/);
    await expect(gql.query(AppInterfaceSettingsDocument)).rejects.toThrow(/settings\[0\]\.vault/);
  });

  it('checks a mutable answer again: it may have changed since', async () => {
    const response = answer(true);
    const gql = await clientOf(response);
    await gql.query(AppInterfaceSettingsDocument);
    (response.data as { settings: Array<{ vault: unknown }> }).settings[0]!.vault = 'no';
    await expect(gql.query(AppInterfaceSettingsDocument)).rejects.toThrow(/settings\[0\]\.vault/);
  });
});

describe('helpers', () => {
  it('reads the vault switch of app-interface settings, false without settings', async () => {
    const vault = await createGqlClient(config, globals, undefined, silentLogger(), {
      transport: fakeTransport({ AppInterfaceSettings: settings([], true) }),
    });
    expect(await appInterfaceSettings(vault)).toEqual({
      vault: true,
      repoUrl: 'https://x',
      kubeBinary: 'oc',
      hashLength: 7,
    });
    const none = await createGqlClient(config, globals, undefined, silentLogger(), {
      transport: fakeTransport({
        AppInterfaceSettings: { data: { settings: null }, extensions: { schemas: [] } },
      }),
    });
    expect((await appInterfaceSettings(none)).vault).toBe(false);
  });

  it('asks a client for the settings once, however often a run reads them', async () => {
    const transport = fakeTransport({ AppInterfaceSettings: settings([], true) });
    const gql = await createGqlClient(config, globals, undefined, silentLogger(), { transport });
    const [a, b] = await Promise.all([appInterfaceSettings(gql), appInterfaceSettings(gql)]);
    expect(b).toBe(a);
    expect(await appInterfaceSettings(gql)).toBe(a);
    expect(transport.asked.filter((o) => o === 'AppInterfaceSettings')).toHaveLength(1);
    // Another client (the next run) asks again.
    const next = await createGqlClient(config, globals, undefined, silentLogger(), { transport });
    await appInterfaceSettings(next);
    expect(transport.asked.filter((o) => o === 'AppInterfaceSettings')).toHaveLength(2);
  });

  it('getResource wants exactly one resource and skips schema validation', async () => {
    const gql = await createGqlClient(config, globals, 'openshift-namespaces', silentLogger(), {
      transport: fakeTransport({
        IntegrationsSchemas: allowList(['/openshift/namespace-1.yml']),
        Resource: {
          data: { resources: [{ path: '/a.yml', content: 'x', sha256sum: 'f00' }] },
          extensions: { schemas: ['/openshift/prometheus-rule-1.yml'] },
        },
      }),
    });
    expect(await getResource(gql, '/a.yml')).toEqual({
      path: '/a.yml',
      content: 'x',
      sha256sum: 'f00',
    });
    const empty = await createGqlClient(config, globals, undefined, silentLogger(), {
      transport: fakeTransport({
        Resource: { data: { resources: [] }, extensions: { schemas: [] } },
      }),
    });
    await expect(getResource(empty, '/missing.yml')).rejects.toThrow(
      'expected exactly one resource at /missing.yml in app-interface, found 0',
    );
  });
});

describe('gqlClient and --dump-schemas', () => {
  const dir = mkdtemp(join(tmpdir(), 'qr-dump-'));
  afterAll(async () => rm(await dir, { recursive: true, force: true }));

  it('writes the schemas every client of the invocation saw as a JSON array', async () => {
    const file = join(await dir, 'schemas.json');
    const runGlobals: GlobalOptions = { ...globals, validateSchemas: false, dumpSchemas: file };
    const ctx = {
      config: configFromObject(
        { graphql: { server: 'file://../../../../examples/app-interface' } },
        import.meta.filename,
      ),
      globals: runGlobals,
      integration: 'openshift-namespaces',
      log: silentLogger(),
    } as unknown as RunContext;
    expect(queriedSchemas(ctx)).toEqual([]);
    const gql = await gqlClient.create(ctx);
    await gql.query(AppInterfaceSettingsDocument);
    await dumpQueriedSchemas(ctx);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual([SETTINGS_SCHEMA]);
    await gqlClient.close?.(gql);
  });
});

describe('parseJsonScalar', () => {
  it('parses JSON text and keeps null', () => {
    expect(parseJsonScalar('{"team":"x","n":[1]}')).toEqual({ team: 'x', n: [1] });
    expect(parseJsonScalar(null)).toBeNull();
    expect(parseJsonScalar(undefined)).toBeNull();
  });
});
