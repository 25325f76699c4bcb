import type { Bundle, BundleDiff, SchemaDiff } from '@qontract/app-interface';
import { describe, expect, it } from 'vitest';
import {
  type IntegrationFile,
  integrationFiles,
  type PrCheck,
  selectIntegration,
  summarizeChanges,
} from './select.ts';

const REGISTERED = new Set(['openshift-namespaces', 'openshift-resources', 'saas-reader']);
const NO_SCHEMA_CHANGES: SchemaDiff = { schemas: [], graphqlChanged: false };

const file = (name: string, schemas: string[], prCheck: PrCheck | null): IntegrationFile => ({
  path: `/app-sre/integrations/${name}.yml`,
  name,
  schemas,
  prCheck,
});

const datafile = (path: string, schema: string): BundleDiff['datafiles'][string] => ({
  datafilepath: path,
  datafileschema: schema,
  old: { $schema: schema, path },
  new: { $schema: schema, path, changed: true },
});

const changes = (diff: Partial<BundleDiff>, schemaDiff = NO_SCHEMA_CHANGES) =>
  summarizeChanges({ datafiles: {}, resources: {}, ...diff }, schemaDiff);

const NS_CHANGE = changes({
  datafiles: { '/ns.yml': datafile('/ns.yml', '/openshift/namespace-1.yml') },
});

describe('selectIntegration', () => {
  const namespaces = file('openshift-namespaces', ['/openshift/namespace-1.yml'], {
    cmd: 'openshift-namespaces',
  });

  it("runs an integration when a changed file's $schema is one it reads", () => {
    expect(selectIntegration(namespaces, NS_CHANGE, REGISTERED)).toMatchObject({
      kind: 'run',
      reason: 'reads /openshift/namespace-1.yml (data/ns.yml)',
    });
    const users = changes({ datafiles: { '/u.yml': datafile('/u.yml', '/access/user-1.yml') } });
    expect(selectIntegration(namespaces, users, REGISTERED)).toEqual({
      kind: 'skip',
      reason: 'nothing it reads changed',
    });
  });

  it('never runs without pr_check, when disabled, or when this CLI does not have it', () => {
    expect(
      selectIntegration({ ...namespaces, prCheck: null }, NS_CHANGE, REGISTERED),
    ).toMatchObject({ kind: 'skip', reason: 'no `pr_check` in its integration file' });
    expect(
      selectIntegration(
        {
          ...namespaces,
          prCheck: { cmd: 'openshift-namespaces', disabled: true, always_run: true },
        },
        NS_CHANGE,
        REGISTERED,
      ),
    ).toMatchObject({ kind: 'skip', reason: '`pr_check.disabled`' });
    expect(
      selectIntegration(
        { ...namespaces, prCheck: { cmd: 'terraform-users' } },
        NS_CHANGE,
        REGISTERED,
      ),
    ).toMatchObject({
      kind: 'skip',
      reason: '`terraform-users` is not an integration of this qontract-reconcile',
    });
  });

  it('always_run runs it whatever changed; an MR without changes runs nothing else', () => {
    const none = changes({});
    expect(selectIntegration(namespaces, none, REGISTERED)).toMatchObject({ kind: 'skip' });
    const always = { ...namespaces, prCheck: { cmd: 'openshift-namespaces', always_run: true } };
    expect(selectIntegration(always, none, REGISTERED)).toMatchObject({
      kind: 'run',
      reason: '`pr_check.always_run`',
    });
  });

  it('resource changes select the resource readers, and their $schema the integrations reading it', () => {
    const resource = (schema: string | null) =>
      changes({
        resources: {
          '/r.yml': {
            resourcepath: '/r.yml',
            new: { path: '/r.yml', content: '', sha256sum: 'x', $schema: schema, backrefs: [] },
          },
        },
      });
    const resources = file('openshift-resources', ['/openshift/namespace-1.yml'], {
      cmd: 'openshift-resources',
    });
    expect(selectIntegration(resources, resource(null), REGISTERED)).toMatchObject({
      kind: 'run',
      reason: 'reads resource files (resources/r.yml)',
    });
    expect(selectIntegration(namespaces, resource(null), REGISTERED).kind).toBe('skip');
    expect(
      selectIntegration(namespaces, resource('/openshift/namespace-1.yml'), REGISTERED),
    ).toMatchObject({ kind: 'run', reason: 'reads /openshift/namespace-1.yml (resources/r.yml)' });
  });

  it('schema changes run everything; saas-only MRs skip what does not ask for them', () => {
    const schemaChange = changes(
      { datafiles: { '/u.yml': datafile('/u.yml', '/access/user-1.yml') } },
      { schemas: [{ path: '/access/user-1.yml', change: 'changed' }], graphqlChanged: false },
    );
    expect(selectIntegration(namespaces, schemaChange, REGISTERED)).toMatchObject({
      kind: 'run',
      reason: 'schemas changed (schemas/access/user-1.yml): every integration runs',
    });
    const saas = changes({
      datafiles: { '/s.yml': datafile('/s.yml', '/app-sre/saas-file-2.yml') },
    });
    const reader = file('saas-reader', ['/app-sre/saas-file-2.yml'], { cmd: 'saas-reader' });
    expect(selectIntegration(reader, saas, REGISTERED)).toMatchObject({
      kind: 'skip',
      reason: 'only saas files changed and `pr_check.run_for_valid_saas_file_changes` is not set',
    });
    const willing = {
      ...reader,
      prCheck: { cmd: 'saas-reader', run_for_valid_saas_file_changes: true },
    };
    expect(selectIntegration(willing, saas, REGISTERED).kind).toBe('run');
  });
});

describe('the change tester', () => {
  const saasDeploy = file(
    'openshift-saas-deploy',
    ['/app-sre/saas-file-2.yml', '/openshift/namespace-1.yml'],
    { cmd: 'openshift-saas-deploy-change-tester', run_for_valid_saas_file_changes: true },
  );
  const SAAS_CHANGE = changes({
    datafiles: { '/saas.yml': datafile('/saas.yml', '/app-sre/saas-file-2.yml') },
  });

  it('is selected like an integration when openshift-saas-deploy is one of this CLI', () => {
    expect(
      selectIntegration(saasDeploy, SAAS_CHANGE, new Set(['openshift-saas-deploy'])),
    ).toMatchObject({ kind: 'run', reason: 'reads /app-sre/saas-file-2.yml (data/saas.yml)' });
    expect(selectIntegration(saasDeploy, SAAS_CHANGE, REGISTERED)).toEqual({
      kind: 'skip',
      reason:
        '`openshift-saas-deploy-change-tester` is not an integration of this qontract-reconcile',
    });
  });

  it('an MR of saas files only runs it, and not the integrations without run_for_valid_saas_file_changes', () => {
    const registered = new Set(['openshift-saas-deploy', 'saas-reader']);
    const reader = file('saas-reader', ['/app-sre/saas-file-2.yml'], { cmd: 'saas-reader' });
    expect(SAAS_CHANGE.onlySaasFiles).toBe(true);
    expect(selectIntegration(saasDeploy, SAAS_CHANGE, registered).kind).toBe('run');
    expect(selectIntegration(reader, SAAS_CHANGE, registered)).toMatchObject({ kind: 'skip' });
  });
});

describe('integrationFiles', () => {
  it('reads name, schemas and pr_check of the integration files; a malformed one is a problem', () => {
    const bundle = {
      data: {
        '/i/a.yml': {
          $schema: '/app-sre/integration-1.yml',
          name: 'a',
          schemas: ['/x-1.yml'],
          pr_check: { cmd: 'a', early_exit: true },
        },
        '/i/b.yml': {
          $schema: '/app-sre/integration-1.yml',
          name: 'b',
          pr_check: { early_exit: 1 },
        },
        '/other.yml': { $schema: '/access/user-1.yml', name: 'u' },
      },
    } as unknown as Bundle;
    const { files, problems } = integrationFiles(bundle);
    expect(files).toEqual([
      {
        path: '/i/a.yml',
        name: 'a',
        schemas: ['/x-1.yml'],
        prCheck: { cmd: 'a', early_exit: true },
      },
    ]);
    expect(problems).toEqual([
      { file: '/i/b.yml', reason: expect.stringMatching(/^integration file: pr_check\.cmd: /) },
    ]);
  });
});
