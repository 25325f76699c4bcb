import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeS3, startFakeS3 } from '@qontract/testing/fake-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromObject } from '../config.ts';
import { defineIntegration } from '../integration.ts';
import { SecretRedactor } from '../redaction.ts';
import { runIntegration } from '../runner.ts';
import type { SecretPathRef, SecretReader } from '../secrets/types.ts';
import { testRunSettings } from '../test-support/run-settings.ts';
import { LocalDirStateStore } from './local-state-store.ts';
import { S3StateStore } from './s3-state-store.ts';
import { openStateStore, resolveStateSettings, stateStoreForRun } from './settings.ts';
import { StateInaccessibleError } from './types.ts';

const BUCKET = 'state-bucket';
let tmp: string;
let awsConfig: string;
let s3: FakeS3;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'state-settings-'));
  awsConfig = join(tmp, 'aws-config');
  await writeFile(awsConfig, '[profile state]\nregion = eu-west-1\n');
  s3 = await startFakeS3({ buckets: [BUCKET] });
});

afterAll(async () => {
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

const noConfig = configFromObject({ graphql: { server: 'file://x' } });

/** A secret reader holding one secret, remembering what was asked. */
function secretsWith(path: string, data: Record<string, string>) {
  const asked: SecretPathRef[] = [];
  const reader: SecretReader = {
    read: async () => {
      throw new Error('not used');
    },
    readAll: async (ref) => {
      asked.push(ref);
      if (ref.path !== path) throw new Error(`unexpected secret ${ref.path}`);
      return data;
    },
  };
  return { reader, asked };
}
const noSecrets = secretsWith('none', {}).reader;

const base = { APP_INTERFACE_STATE_BUCKET: BUCKET, APP_INTERFACE_STATE_BUCKET_REGION: 'us-east-1' };

describe('resolveStateSettings', () => {
  it('uses an AWS profile when its config file exists', async () => {
    const env = { ...base, APP_INTERFACE_STATE_AWS_PROFILE: 'state', AWS_CONFIG_FILE: awsConfig };
    await expect(resolveStateSettings(env, noConfig, noSecrets)).resolves.toMatchObject({
      provider: 's3',
      bucket: BUCKET,
      region: 'us-east-1',
      credentials: { kind: 'profile', profile: 'state', configFile: awsConfig },
    });
  });

  it('skips the profile when the AWS config file is missing', async () => {
    const env = {
      ...base,
      APP_INTERFACE_STATE_AWS_PROFILE: 'state',
      AWS_CONFIG_FILE: join(tmp, 'absent'),
      APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY: 'static-secret-key',
    };
    const settings = await resolveStateSettings(env, noConfig, noSecrets);
    expect(settings.source).toBe('APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID');
  });

  it('reads credentials from a Vault secret, with its version', async () => {
    const { reader, asked } = secretsWith('app-sre/state-creds', {
      aws_access_key_id: 'AKIAVAULT',
      aws_secret_access_key: 'vault-secret-key',
    });
    const env = {
      ...base,
      APP_INTERFACE_STATE_VAULT_SECRET: 'app-sre/state-creds',
      APP_INTERFACE_STATE_VAULT_SECRET_VERSION: '3',
      APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID: 'ignored',
      APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY: 'ignored-too',
    };
    await expect(resolveStateSettings(env, noConfig, reader)).resolves.toMatchObject({
      credentials: {
        kind: 'static',
        accessKeyId: 'AKIAVAULT',
        secretAccessKey: 'vault-secret-key',
      },
      source: 'APP_INTERFACE_STATE_VAULT_SECRET',
    });
    expect(asked).toEqual([{ path: 'app-sre/state-creds', version: 3 }]);
  });

  it('names the secret when it lacks the key fields', async () => {
    const { reader } = secretsWith('app-sre/bad', { aws_access_key_id: 'AKIA' });
    const env = { ...base, APP_INTERFACE_STATE_VAULT_SECRET: 'app-sre/bad' };
    await expect(resolveStateSettings(env, noConfig, reader)).rejects.toThrow(
      'state credentials secret app-sre/bad needs the fields aws_access_key_id and aws_secret_access_key',
    );
  });

  it('registers static keys with the redactor', async () => {
    const redactor = new SecretRedactor();
    const env = {
      ...base,
      APP_INTERFACE_STATE_BUCKET_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY: 'static-secret-key',
    };
    await resolveStateSettings(env, noConfig, noSecrets, { redactor });
    expect(redactor.redact('key=static-secret-key')).toBe('key=***');
  });

  it("uses an app-interface account's credentials and default region", async () => {
    const env = {
      APP_INTERFACE_STATE_BUCKET: BUCKET,
      APP_INTERFACE_STATE_BUCKET_ACCOUNT: 'app-sre',
    };
    const accountCredentials = async (name: string) =>
      name === 'app-sre'
        ? { accessKeyId: 'AKIAACCOUNT', secretAccessKey: 'account-secret', region: 'eu-central-1' }
        : undefined;
    await expect(
      resolveStateSettings(env, noConfig, noSecrets, { accountCredentials }),
    ).resolves.toMatchObject({
      region: 'eu-central-1',
      source: 'APP_INTERFACE_STATE_BUCKET_ACCOUNT',
    });
    await expect(
      resolveStateSettings(
        { ...env, APP_INTERFACE_STATE_BUCKET_ACCOUNT: 'unknown' },
        noConfig,
        noSecrets,
        { accountCredentials },
      ),
    ).rejects.toThrow("names the AWS account 'unknown', which app-interface does not define");
  });

  it('uses [state] from config.toml, resolving a local path against the config file', async () => {
    const config = configFromObject(
      { graphql: { server: 'file://x' }, state: { provider: 'local', path: 'var/state' } },
      '/etc/qontract/config.toml',
    );
    await expect(resolveStateSettings({}, config, noSecrets)).resolves.toEqual({
      provider: 'local',
      path: '/etc/qontract/var/state',
      source: '[state] in config.toml',
    });
    const s3Config = configFromObject({
      graphql: { server: 'file://x' },
      state: { provider: 's3', bucket: 'b', region: 'r', endpoint: 'http://127.0.0.1:9000' },
    });
    await expect(resolveStateSettings({}, s3Config, noSecrets)).resolves.toMatchObject({
      provider: 's3',
      endpoint: 'http://127.0.0.1:9000',
      credentials: { kind: 'default' },
    });
  });

  it('falls back to app-interface settings, which must use S3', async () => {
    const { reader } = secretsWith('app-sre/ai-state', {
      aws_access_key_id: 'AKIAAI',
      aws_secret_access_key: 'ai-secret',
    });
    const appInterfaceSettings = async () => ({
      provider: 's3',
      bucket: 'ai-bucket',
      region: 'us-east-2',
      credentials: { path: 'app-sre/ai-state' },
    });
    await expect(
      resolveStateSettings({}, noConfig, reader, { appInterfaceSettings }),
    ).resolves.toMatchObject({ bucket: 'ai-bucket', source: 'app-interface settings' });
    await expect(
      resolveStateSettings({}, noConfig, reader, {
        appInterfaceSettings: async () => ({ provider: 'gcs' }),
      }),
    ).rejects.toThrow("app-interface settings use the state provider 'gcs'; only s3 is supported");
  });

  it('lists every option when nothing is configured', async () => {
    const err = await resolveStateSettings(
      { APP_INTERFACE_STATE_BUCKET: BUCKET },
      noConfig,
      noSecrets,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateInaccessibleError);
    const message = (err as Error).message;
    expect(message).toContain('no state store is configured; set one of:');
    for (const option of [
      'APP_INTERFACE_STATE_AWS_PROFILE',
      'APP_INTERFACE_STATE_VAULT_SECRET',
      'APP_INTERFACE_STATE_BUCKET_SECRET_ACCESS_KEY',
      'APP_INTERFACE_STATE_BUCKET_ACCOUNT',
      '[state] in config.toml',
      'app-interface settings',
    ]) {
      expect(message).toContain(option);
    }
  });
});

describe('openStateStore', () => {
  it('opens a local directory store', async () => {
    const store = await openStateStore('demo', {
      provider: 'local',
      path: join(tmp, 'local'),
      source: 'test',
    });
    expect(store).toBeInstanceOf(LocalDirStateStore);
    await store.set('k', { a: 1 });
    expect(await store.ls()).toEqual(['/k']);
  });

  it('opens an S3 store from [state] settings with an endpoint and static keys', async () => {
    const config = configFromObject({
      graphql: { server: 'file://x' },
      state: {
        provider: 's3',
        bucket: BUCKET,
        region: s3.region,
        endpoint: s3.endpoint,
        access_key_id: s3.credentials.accessKeyId,
        secret_access_key: s3.credentials.secretAccessKey,
      },
    });
    const store = await openStateStore('demo', await resolveStateSettings({}, config, noSecrets));
    expect(store).toBeInstanceOf(S3StateStore);
    await store.set('k', [1, 'two']);
    expect(await store.get('k')).toEqual([1, 'two']);
    (store as S3StateStore).close();
  });

  it('fails with StateInaccessibleError when the bucket is missing', async () => {
    await expect(
      openStateStore('demo', {
        provider: 's3',
        bucket: 'missing-bucket',
        region: s3.region,
        endpoint: s3.endpoint,
        credentials: { kind: 'static', ...s3.credentials },
        source: 'test',
      }),
    ).rejects.toThrow(/^state bucket missing-bucket is not accessible/);
  });
});

describe('stateStoreForRun', () => {
  it("gives an integration run the store its config names, under the run's integration", async () => {
    const directory = join(tmp, 'run-state');
    const definition = defineIntegration({
      name: 'state-demo',
      version: '0.1.0',
      description: 'writes one state key',
      options: {},
      run: async (ctx) => {
        const state = await ctx.state();
        await state.set('last-run', { ok: true });
        // Another integration's keys, in the same store (as SAPM reads the deploy's promotions).
        const other = await ctx.state('openshift-saas-deploy');
        expect(await other.get('promotions_v2/x', null)).toEqual({ success: true });
        expect(await ctx.state('openshift-saas-deploy')).toBe(other);
      },
    });
    const { settings } = testRunSettings(definition, {
      config: configFromObject({
        graphql: { server: 'file://x' },
        state: { provider: 'local', path: directory },
      }),
      state: stateStoreForRun(),
    });
    await mkdir(join(directory, 'state', 'openshift-saas-deploy', 'promotions_v2'), {
      recursive: true,
    });
    await writeFile(
      join(directory, 'state', 'openshift-saas-deploy', 'promotions_v2', 'x'),
      '{"success": true}',
    );
    const result = await runIntegration(settings);
    expect(result.exitCode, JSON.stringify(result)).toBe(0);
    expect(await readFile(join(directory, 'state', 'state-demo', 'last-run'), 'utf8')).toBe(
      '{"ok": true}',
    );
  });
});
