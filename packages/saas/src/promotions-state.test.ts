import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LocalDirStateStore, QontractError } from '@qontract/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TargetPromotion } from './promotions.ts';
import {
  nextPromotionRecord,
  planPromotionPublications,
  publishPromotions,
} from './promotions-publish.ts';
import {
  type PromotionRecord,
  PromotionState,
  parseCheckIn,
  promotionKey,
  pyUtcDatetimeStr,
} from './promotions-state.ts';

const SHA = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const INTEGRATION = 'openshift-saas-deploy';

let dir: string;
let store: LocalDirStateStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'promotions-'));
  store = await LocalDirStateStore.open({ integration: INTEGRATION, directory: dir });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The file the store writes for a key, as it would be in the S3 bucket. */
const objectFile = (key: string) => join(dir, 'state', INTEGRATION, ...key.split('/'));
const readObject = (key: string) => readFile(objectFile(key), 'utf8');
async function writeObject(key: string, text: string) {
  await mkdir(dirname(objectFile(key)), { recursive: true });
  await writeFile(objectFile(key), text);
}

describe('PromotionState', () => {
  it('writes the original key and JSON text and reads it back', async () => {
    const state = new PromotionState(store);
    const rec: PromotionRecord = {
      success: true,
      target_config_hash: '0123456789abcdef',
      saas_file: 'app-stage',
      check_in: '2026-01-02 03:04:05.123000+00:00',
      has_succeeded_once: true,
    };
    await state.publishPromotion('stage-done', 'uid1', SHA, rec);
    expect(promotionKey('stage-done', 'uid1', SHA)).toBe(`promotions_v2/stage-done/uid1/${SHA}`);
    // Python: json.dumps(PromotionData(...).model_dump(), sort_keys=True)
    expect(await readObject(`promotions_v2/stage-done/uid1/${SHA}`)).toBe(
      '{"check_in": "2026-01-02 03:04:05.123000+00:00", "has_succeeded_once": true, ' +
        '"saas_file": "app-stage", "success": true, "target_config_hash": "0123456789abcdef"}',
    );
    expect(await new PromotionState(store).getPromotion('stage-done', 'uid1', SHA)).toEqual(rec);
  });

  it('writes null fields as null', async () => {
    await new PromotionState(store).publishPromotion('c', 'u', SHA, {
      success: false,
      target_config_hash: null,
      saas_file: 's',
      check_in: 'x',
      has_succeeded_once: null,
    });
    expect(await readObject(`promotions_v2/c/u/${SHA}`)).toBe(
      '{"check_in": "x", "has_succeeded_once": null, "saas_file": "s", "success": false, "target_config_hash": null}',
    );
  });

  it('reads a missing or empty record as none and fills absent fields with null', async () => {
    const state = new PromotionState(store);
    expect(await state.getPromotion('c', 'u', SHA)).toBeUndefined();
    await writeObject(`promotions_v2/c/empty/${SHA}`, '{}');
    expect(await state.getPromotion('c', 'empty', SHA)).toBeUndefined();
    await writeObject(`promotions_v2/c/old/${SHA}`, '{"success": true}');
    expect(await state.getPromotion('c', 'old', SHA)).toEqual({
      success: true,
      target_config_hash: null,
      saas_file: null,
      check_in: null,
      has_succeeded_once: null,
    });
  });

  it('refuses a record with unknown fields or no success, naming the key', async () => {
    const state = new PromotionState(store);
    await writeObject(`promotions_v2/c/bad/${SHA}`, '{"success": true, "extra": 1}');
    await expect(state.getPromotion('c', 'bad', SHA)).rejects.toThrow(QontractError);
    await writeObject(`promotions_v2/c/bad2/${SHA}`, '{"saas_file": "x"}');
    await expect(state.getPromotion('c', 'bad2', SHA)).rejects.toThrow(
      `promotion record promotions_v2/c/bad2/${SHA} is invalid`,
    );
  });

  it('serves cached reads only when asked to', async () => {
    const state = new PromotionState(store);
    await writeObject(`promotions_v2/c/u/${SHA}`, '{"success": true}');
    expect((await state.getPromotion('c', 'u', SHA))?.success).toBe(true);
    await writeObject(`promotions_v2/c/u/${SHA}`, '{"success": false}');
    expect((await state.getPromotion('c', 'u', SHA, { useCache: true }))?.success).toBe(true);
    expect((await state.getPromotion('c', 'u', SHA))?.success).toBe(false);
  });
});

describe('check-in time', () => {
  it.each([
    ['2026-01-02T03:04:05.123Z', '2026-01-02 03:04:05.123000+00:00'],
    ['2026-01-02T03:04:05.000Z', '2026-01-02 03:04:05+00:00'],
  ])('%s → Python str(datetime) %s', (iso, expected) => {
    expect(pyUtcDatetimeStr(new Date(iso))).toBe(expected);
  });

  it.each([
    ['2026-01-09 12:00:00.5+00:00', Date.UTC(2026, 0, 9, 12) * 1000 + 500000],
    ['2026-01-09T13:00:00+01:00', Date.UTC(2026, 0, 9, 12) * 1000],
    ['2026-01-09T23:59:59.999999Z', Date.UTC(2026, 0, 9, 23, 59, 59) * 1000 + 999999],
    ['2026-01-09 12:00-0130', Date.UTC(2026, 0, 9, 13, 30) * 1000],
  ])('parses %s', (text, micros) => {
    expect(parseCheckIn(text, 'w')).toBe(micros);
  });

  it.each(['yesterday', '2026-13-01 00:00:00+00:00', '2026-01-09'])('refuses %s', (text) => {
    expect(() => parseCheckIn(text, 'w')).toThrow(QontractError);
  });
});

function publishing(channels: string[], overrides: Partial<TargetPromotion> = {}): TargetPromotion {
  return {
    saasFile: 'app-stage',
    resourceTemplate: 'rt',
    targetName: 'stage',
    cluster: 'c1',
    namespace: 'app-stage',
    url: 'https://github.com/org/app',
    commitSha: SHA,
    targetConfigHash: 'fedcba9876543210',
    saasTargetUid: 'pub-uid',
    soakDays: 0,
    auto: null,
    publish: channels,
    subscribe: [],
    promotionData: [],
    ...overrides,
  };
}

describe('nextPromotionRecord', () => {
  const now = new Date('2026-02-01T00:00:00Z');
  const input = (success: boolean) => ({ success, saasFile: 's', targetConfigHash: 'h', now });
  const prev = (success: boolean, once: boolean | null, checkIn: string | null = 'old') => ({
    success,
    target_config_hash: 'h0',
    saas_file: 's',
    check_in: checkIn,
    has_succeeded_once: once,
  });

  it.each([
    ['first success', undefined, true, '2026-02-01 00:00:00+00:00', true],
    ['first failure', undefined, false, '2026-02-01 00:00:00+00:00', false],
    ['success after success keeps the check-in', prev(true, true), true, 'old', true],
    [
      'success after success without check-in',
      prev(true, true, null),
      true,
      '2026-02-01 00:00:00+00:00',
      true,
    ],
    ['success after failure restarts', prev(false, true), true, '2026-02-01 00:00:00+00:00', true],
    [
      'failure after success: once sticks',
      prev(true, true),
      false,
      '2026-02-01 00:00:00+00:00',
      true,
    ],
    ['failure after failure', prev(false, null), false, '2026-02-01 00:00:00+00:00', false],
  ] as const)('%s', (_label, previous, success, checkIn, once) => {
    expect(nextPromotionRecord(previous, input(success))).toEqual({
      success,
      target_config_hash: 'h',
      saas_file: 's',
      check_in: checkIn,
      has_succeeded_once: once,
    });
  });
});

describe('publishPromotions', () => {
  it('writes one record per publishing target and channel, keeping check-ins across successes', async () => {
    const promotions = [
      null,
      publishing(['stage-done', 'all']),
      publishing([], { saasTargetUid: 'quiet' }),
    ];
    const t1 = new Date('2026-03-01T10:00:00.250Z');
    const first = await publishPromotions(promotions, {
      state: new PromotionState(store),
      success: true,
      now: t1,
    });
    expect(first.map((p) => [p.key, p.message])).toEqual([
      [
        `promotions_v2/stage-done/pub-uid/${SHA}`,
        `Commit ${SHA} was published with success True to channel stage-done`,
      ],
      [
        `promotions_v2/all/pub-uid/${SHA}`,
        `Commit ${SHA} was published with success True to channel all`,
      ],
    ]);
    const text1 =
      '{"check_in": "2026-03-01 10:00:00.250000+00:00", "has_succeeded_once": true, ' +
      '"saas_file": "app-stage", "success": true, "target_config_hash": "fedcba9876543210"}';
    expect(await readObject(`promotions_v2/stage-done/pub-uid/${SHA}`)).toBe(text1);
    expect(await readObject(`promotions_v2/all/pub-uid/${SHA}`)).toBe(text1);

    // A redeploy of the same commit that succeeds again keeps the soak start.
    await publishPromotions(promotions, {
      state: new PromotionState(store),
      success: true,
      now: new Date('2026-03-02T00:00:00Z'),
    });
    expect(await readObject(`promotions_v2/stage-done/pub-uid/${SHA}`)).toBe(text1);

    // A failure restarts the check-in but has_succeeded_once stays.
    const failed = await publishPromotions(promotions.slice(0, 2), {
      state: new PromotionState(store),
      success: false,
      now: new Date('2026-03-03T00:00:00Z'),
    });
    expect(failed[0]?.message).toBe(
      `Commit ${SHA} was published with success False to channel stage-done`,
    );
    expect(await readObject(`promotions_v2/stage-done/pub-uid/${SHA}`)).toBe(
      '{"check_in": "2026-03-03 00:00:00+00:00", "has_succeeded_once": true, ' +
        '"saas_file": "app-stage", "success": false, "target_config_hash": "fedcba9876543210"}',
    );
  });

  it('plans without writing', async () => {
    const state = new PromotionState(store);
    const plan = await planPromotionPublications([publishing(['c'])], {
      reader: state,
      success: true,
      now: new Date('2026-03-01T00:00:00Z'),
    });
    expect(plan).toHaveLength(1);
    expect(await store.ls()).toEqual([]);
  });
});
