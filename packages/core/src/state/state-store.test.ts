import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { type FakeS3, startFakeS3 } from '@qontract/testing/fake-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDirStateStore } from './local-state-store.ts';
import { createS3Client, S3StateStore } from './s3-state-store.ts';
import { stateTransaction } from './transaction.ts';
import {
  AbortStateTransactionError,
  StateInaccessibleError,
  StateKeyExistsError,
  StateKeyNotFoundError,
  type StateStore,
} from './types.ts';

const BUCKET = 'app-interface-state';

let s3: FakeS3;
let tmp: string;
let counter = 0;

beforeAll(async () => {
  s3 = await startFakeS3({ buckets: [BUCKET] });
  tmp = await mkdtemp(join(tmpdir(), 'local-state-'));
});

afterAll(async () => {
  shared?.destroy();
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

let shared: S3Client | undefined;

/** One client for the whole file (S3StateStore never closes a client it was given). */
function s3Client(): S3Client {
  shared ??= createS3Client({
    bucket: BUCKET,
    region: s3.region,
    endpoint: s3.endpoint,
    credentials: s3.credentials,
  });
  return shared;
}

/** Raw object text, read past the store, to check the on-disk/on-S3 bytes. */
interface Backend {
  readonly name: string;
  open(integration: string): Promise<StateStore>;
  rawText(objectKey: string): Promise<string>;
  putRaw(objectKey: string, text: string): Promise<void>;
}

const backends: Backend[] = [
  {
    name: 'S3 (s3rver)',
    open: (integration) => S3StateStore.open({ integration, bucket: BUCKET, client: s3Client() }),
    async rawText(objectKey) {
      const res = await s3Client().send(new GetObjectCommand({ Bucket: BUCKET, Key: objectKey }));
      return (await res.Body?.transformToString('utf-8')) ?? '';
    },
    async putRaw(objectKey, text) {
      await s3Client().send(new PutObjectCommand({ Bucket: BUCKET, Key: objectKey, Body: text }));
    },
  },
  {
    name: 'local directory',
    open: (integration) => LocalDirStateStore.open({ integration, directory: tmp }),
    rawText: (objectKey) => readFile(join(tmp, ...objectKey.split('/')), 'utf8'),
    async putRaw(objectKey, text) {
      const { writeFile, mkdir } = await import('node:fs/promises');
      const file = join(tmp, ...objectKey.split('/'));
      await mkdir(join(file, '..'), { recursive: true });
      await writeFile(file, text);
    },
  },
];

describe.each(backends)('state store on $name', (backend) => {
  // Each test gets its own integration, so tests never see each other's keys.
  const fresh = () => backend.open(`integration-${++counter}`);

  it('writes values as Python json.dumps(sort_keys=True) text under state/<integration>/', async () => {
    const store = await fresh();
    await store.set('clusters/a', { z: 1, a: [true, null, 'ü'], m: { b: 2.5, a: 'x' } });
    expect(await backend.rawText(`state/integration-${counter}/clusters/a`)).toBe(
      '{"a": [true, null, "\\u00fc"], "m": {"a": "x", "b": 2.5}, "z": 1}',
    );
    expect(await store.get('clusters/a')).toEqual({
      z: 1,
      a: [true, null, 'ü'],
      m: { b: 2.5, a: 'x' },
    });
  });

  it('reads text written by the original', async () => {
    const store = await fresh();
    await backend.putRaw(`state/integration-${counter}/legacy`, '{"a": 1.0, "b": "\\u00e9"}');
    expect(await store.get('legacy')).toEqual({ a: 1, b: 'é' });
  });

  it('reports existence and lists keys with a leading slash', async () => {
    const store = await fresh();
    expect(await store.exists('k1')).toBe(false);
    await store.set('k1', 'v1');
    await store.set('dir/k2', 2);
    expect(await store.exists('k1')).toBe(true);
    expect((await store.ls()).sort()).toEqual(['/dir/k2', '/k1']);
  });

  it('gets a default or a key error for a missing or non-JSON key', async () => {
    const store = await fresh();
    await expect(store.get('missing')).rejects.toThrow(
      new StateKeyNotFoundError(`[state] key missing not found in state/integration-${counter}`),
    );
    await expect(store.get('missing', 'fallback')).resolves.toBe('fallback');
    await expect(store.get('missing', undefined)).resolves.toBeUndefined();
    await backend.putRaw(`state/integration-${counter}/garbage`, 'not json');
    await expect(store.get('garbage')).rejects.toBeInstanceOf(StateKeyNotFoundError);
  });

  it('adds only new keys unless forced', async () => {
    const store = await fresh();
    await store.add('once', { v: 1 });
    await expect(store.add('once', { v: 2 })).rejects.toThrow(
      new StateKeyExistsError(`[state] key once already exists in state/integration-${counter}`),
    );
    await store.add('once', { v: 3 }, { force: true });
    expect(await store.get('once')).toEqual({ v: 3 });
  });

  it('keeps metadata with a value', async () => {
    const store = await fresh();
    await store.set('with-meta', [1], { owner: 'team-a' });
    expect(await store.head('with-meta')).toEqual({ exists: true, metadata: { owner: 'team-a' } });
    expect(await store.head('without')).toEqual({ exists: false, metadata: {} });
  });

  it('returns values under a path with getAll, keyed relative to it', async () => {
    const store = await fresh();
    await store.set('accounts/a', 1);
    await store.set('accounts/b/c', { x: 'y' });
    await store.set('other', 3);
    expect(await store.getAll('accounts')).toEqual({ a: 1, 'b/c': { x: 'y' } });
  });

  it('removes keys, refusing absent ones', async () => {
    const store = await fresh();
    await store.set('gone', true);
    await store.rm('gone');
    expect(await store.exists('gone')).toBe(false);
    await expect(store.rm('gone')).rejects.toBeInstanceOf(StateKeyNotFoundError);
  });

  it('uses state/<key> for an empty integration', async () => {
    const store = await backend.open('');
    await store.set(`top-level-${counter}`, 'v');
    expect(await backend.rawText(`state/top-level-${counter}`)).toBe('"v"');
  });

  it('writes a transaction value only when it changed', async () => {
    const store = await fresh();
    await stateTransaction<number>(store, 'counter', (tx) => {
      expect(tx.value).toBeNull();
      tx.value = 1;
    });
    expect(await store.get('counter')).toBe(1);
    await stateTransaction<number>(store, 'counter', (tx) => {
      tx.value = (tx.value ?? 0) + 1;
    });
    expect(await store.get('counter')).toBe(2);
    await stateTransaction<number>(store, 'counter', () => undefined, 5);
    expect(await store.get('counter')).toBe(5);
    await stateTransaction<number>(store, 'counter', (tx) => {
      tx.value = 99;
      throw new AbortStateTransactionError();
    });
    expect(await store.get('counter')).toBe(5);
    await expect(
      stateTransaction<number>(store, 'counter', (tx) => {
        tx.value = 100;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.get('counter')).toBe(5);
  });
});

describe('S3StateStore', () => {
  it('fails with StateInaccessibleError when the bucket does not answer', async () => {
    const err = await S3StateStore.open({
      integration: 'x',
      bucket: 'no-such-bucket',
      client: s3Client(),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateInaccessibleError);
    expect((err as Error).message).toMatch(/^state bucket no-such-bucket is not accessible: /);
    expect((err as Error).message).not.toContain(s3.credentials.secretAccessKey);
  });

  it('follows continuation tokens when listing', async () => {
    // s3rver's continuation tokens use DES, which Node's OpenSSL 3 no longer offers,
    // so paging is checked against a client that serves fixed pages.
    const pages: Record<string, { keys: string[]; next?: string }> = {
      '': { keys: ['state/paged/a', 'state/paged/b'], next: 't1' },
      t1: { keys: ['state/paged/c'], next: 't2' },
      t2: { keys: ['state/paged/d'] },
    };
    const seenTokens: Array<string | undefined> = [];
    const client = {
      send: async (command: unknown) => {
        if (command instanceof ListObjectsV2Command) {
          seenTokens.push(command.input.ContinuationToken);
          const page = pages[command.input.ContinuationToken ?? ''];
          return {
            Contents: page?.keys.map((Key) => ({ Key })),
            IsTruncated: page?.next !== undefined,
            NextContinuationToken: page?.next,
          };
        }
        return {};
      },
      destroy: () => undefined,
    } as unknown as S3Client;
    const store = await S3StateStore.open({ integration: 'paged', bucket: BUCKET, client });
    expect(await store.ls()).toEqual(['/a', '/b', '/c', '/d']);
    expect(seenTokens).toEqual([undefined, 't1', 't2']);
  });
});

describe('LocalDirStateStore', () => {
  it('refuses keys that would leave the state directory', async () => {
    const store = await LocalDirStateStore.open({ integration: 'safe', directory: tmp });
    await expect(store.set('../escape', 1)).rejects.toBeInstanceOf(StateInaccessibleError);
  });
});
