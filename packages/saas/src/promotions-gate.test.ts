import { QontractError } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import type { CodeComponentVersions, TargetPromotion } from './promotions.ts';
import { pyTimedeltaStr, validatePromotions } from './promotions-gate.ts';
import {
  type PromotionRecord,
  type PromotionRecordReader,
  promotionKey,
} from './promotions-state.ts';

const SHA = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const URL = 'https://github.com/org/app';
const NOW = new Date('2026-01-10T00:00:00Z');

function promotion(overrides: Partial<TargetPromotion> = {}): TargetPromotion {
  return {
    saasFile: 'app-prod',
    resourceTemplate: 'rt',
    targetName: 'prod',
    cluster: 'c1',
    namespace: 'app-prod',
    url: URL,
    commitSha: SHA,
    targetConfigHash: '1111111111111111',
    saasTargetUid: 'sub-uid',
    soakDays: 0,
    auto: true,
    publish: null,
    subscribe: [{ name: 'stage', publisherUids: ['pub-1'] }],
    promotionData: [],
    ...overrides,
  };
}

function record(overrides: Partial<PromotionRecord> = {}): PromotionRecord {
  return {
    success: true,
    target_config_hash: null,
    saas_file: 'app-stage',
    check_in: null,
    has_succeeded_once: true,
    ...overrides,
  };
}

/** Records by state key; what is not there has no record. */
function reader(records: Record<string, PromotionRecord>): PromotionRecordReader {
  return {
    getPromotion: async (channel, uid, sha) => records[promotionKey(channel, uid, sha)],
  };
}

const at = (channel: string, uid: string) => promotionKey(channel, uid, SHA);
const NO_VERSIONS: CodeComponentVersions = { blocked: new Map(), hotfix: new Map() };
const ID = '[saas_file=app-prod/target_uid=sub-uid]';

async function gate(
  p: TargetPromotion,
  records: Record<string, PromotionRecord>,
  versions = NO_VERSIONS,
) {
  return validatePromotions([p], { reader: reader(records), versions, now: NOW });
}

describe('validatePromotions', () => {
  it('passes targets without subscriptions and skips targets without a promotion', async () => {
    const result = await validatePromotions([null, promotion({ subscribe: [] })], {
      reader: reader({}),
      versions: NO_VERSIONS,
      now: NOW,
    });
    expect(result).toEqual({ valid: true, errors: [], infos: [] });
  });

  it('passes a commit every publisher deployed with success', async () => {
    const result = await gate(promotion(), { [at('stage', 'pub-1')]: record() });
    expect(result.valid).toBe(true);
    expect(result.infos).toEqual([
      `${ID} Promotion data is missing; rely on the success state only`,
    ]);
  });

  it('refuses a blocked commit, even when it is also a hotfix', async () => {
    const versions = {
      blocked: new Map([[URL, new Set([SHA])]]),
      hotfix: new Map([[URL, new Set([SHA])]]),
    };
    const result = await gate(promotion(), { [at('stage', 'pub-1')]: record() }, versions);
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([
      {
        saasFile: 'app-prod',
        resourceTemplate: 'rt',
        targetName: 'prod',
        cluster: 'c1',
        namespace: 'app-prod',
        targetUid: 'sub-uid',
        commitSha: SHA,
        channel: null,
        message: `${ID} Commit ${SHA} is blocked!`,
      },
    ]);
  });

  it('blocked versions of another repository do not count', async () => {
    const versions = {
      blocked: new Map([['https://github.com/org/other', new Set([SHA])]]),
      hotfix: new Map(),
    };
    expect((await gate(promotion(), { [at('stage', 'pub-1')]: record() }, versions)).valid).toBe(
      true,
    );
  });

  it('lets a hotfix through without any record or soak', async () => {
    const versions = { blocked: new Map(), hotfix: new Map([[URL, new Set([SHA])]]) };
    const result = await gate(promotion({ soakDays: 30 }), {}, versions);
    expect(result).toEqual({ valid: true, errors: [], infos: [] });
  });

  it('refuses a commit a publisher has no record of', async () => {
    const p = promotion({ subscribe: [{ name: 'stage', publisherUids: ['pub-1', 'pub-2'] }] });
    const result = await gate(p, { [at('stage', 'pub-1')]: record() });
    expect(result.errors.map((e) => [e.channel, e.message])).toEqual([
      [
        'stage',
        `${ID} Commit ${SHA} was not published with success to channel stage (publisher uid: pub-2)`,
      ],
    ]);
  });

  it.each([
    [false, false, false],
    [false, null, false],
    [false, true, true],
    [true, null, true],
  ])('success=%s has_succeeded_once=%s → passes: %s', async (success, once, passes) => {
    const result = await gate(promotion(), {
      [at('stage', 'pub-1')]: record({ success, has_succeeded_once: once }),
    });
    expect(result.valid).toBe(passes);
  });

  it('sums soak time over publishers and channels against soakDays', async () => {
    const p = promotion({
      soakDays: 2,
      subscribe: [
        { name: 'stage', publisherUids: ['pub-1'] },
        { name: 'canary', publisherUids: ['pub-2'] },
      ],
    });
    const records = {
      [at('stage', 'pub-1')]: record({ check_in: '2026-01-09 00:00:00+00:00' }),
      [at('canary', 'pub-2')]: record({ check_in: '2026-01-09T01:00:00+01:00' }),
    };
    expect((await gate(p, records)).valid).toBe(true);
  });

  it('refuses a commit that has not soaked long enough, listing each contribution', async () => {
    const p = promotion({
      soakDays: 2,
      subscribe: [{ name: 'stage', publisherUids: ['pub-1', 'pub-2', 'pub-3'] }],
    });
    const records = {
      [at('stage', 'pub-1')]: record({ check_in: '2026-01-09 12:00:00.5+00:00' }),
      [at('stage', 'pub-2')]: record({ check_in: null }),
      [at('stage', 'pub-3')]: record({ check_in: '2026-01-10 00:00:01+00:00' }),
    };
    const result = await gate(p, records);
    expect(result.errors.map((e) => [e.channel, e.message])).toEqual([
      [
        null,
        `${ID} SoakDays gate failed for commit ${SHA}. Accumulated=11:59:58.500000, required=2 day(s). ` +
          'channel=stage uid=pub-1 check_in=2026-01-09 12:00:00.5+00:00 contribution=11:59:59.500000 | ' +
          'channel=stage uid=pub-2 check_in=None contribution=None | ' +
          'channel=stage uid=pub-3 check_in=2026-01-10 00:00:01+00:00 contribution=-1 day, 23:59:59',
      ],
    ]);
  });

  it('refuses even soakDays 0 when check-ins lie in the future (as upstream)', async () => {
    const result = await gate(promotion(), {
      [at('stage', 'pub-1')]: record({ check_in: '2026-01-11 00:00:00+00:00' }),
    });
    expect(result.valid).toBe(false);
  });

  it('a check-in without a time zone is an error naming the record', async () => {
    await expect(
      gate(promotion(), { [at('stage', 'pub-1')]: record({ check_in: '2026-01-09 00:00:00' }) }),
    ).rejects.toThrow(QontractError);
    await expect(
      gate(promotion(), { [at('stage', 'pub-1')]: record({ check_in: '2026-01-09 00:00:00' }) }),
    ).rejects.toThrow(
      `promotion record ${at('stage', 'pub-1')}: check_in '2026-01-09 00:00:00' has no time zone`,
    );
  });

  describe('promotion_data parent saas config hash', () => {
    const parent = (channel: string | null, hash: string | null) => ({
      channel,
      data: [{ type: 'parent_saas_config', parent_saas: 'app-stage', target_config_hash: hash }],
    });
    const p2 = (promotionData: TargetPromotion['promotionData']) =>
      promotion({
        subscribe: [{ name: 'stage', publisherUids: ['pub-1', 'pub-2'] }],
        promotionData,
      });
    const records = {
      [at('stage', 'pub-1')]: record({ target_config_hash: 'bbbbbbbbbbbbbbbb' }),
      [at('stage', 'pub-2')]: record({ target_config_hash: 'aaaaaaaaaaaaaaaa' }),
    };

    it('passes when the hash is one a publisher recorded', async () => {
      const result = await gate(p2([parent('stage', 'aaaaaaaaaaaaaaaa')]), records);
      expect(result).toEqual({ valid: true, errors: [], infos: [] });
    });

    it('refuses a hash no publisher recorded (a newer parent config)', async () => {
      const result = await gate(p2([parent('stage', 'cccccccccccccccc')]), records);
      expect(result.errors.map((e) => [e.channel, e.message])).toEqual([
        [
          'stage',
          `${ID} Parent saas target has run with a newer configuration and the same commit (ref). ` +
            'Check if other MR exists for this target, or update cccccccccccccccc to any in ' +
            "{'aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb'} for channel stage",
        ],
      ]);
    });

    it('refuses a parent entry without a hash once publishers recorded hashes', async () => {
      const result = await gate(p2([parent('stage', null)]), records);
      expect(result.errors[0]?.message).toContain('or update None to any in');
    });

    it('relies on success when the channel has no parent entry', async () => {
      const result = await gate(p2([parent('canary', 'cccccccccccccccc')]), records);
      expect(result).toEqual({
        valid: true,
        errors: [],
        infos: [`${ID} Parent Saas config missing on target; rely on the success state only`],
      });
    });

    it('relies on success when no publisher recorded a hash', async () => {
      const bare = {
        [at('stage', 'pub-1')]: record(),
        [at('stage', 'pub-2')]: record(),
      };
      const result = await gate(p2([parent('stage', 'cccccccccccccccc')]), bare);
      expect(result.valid).toBe(true);
      expect(result.infos).toEqual([
        `${ID} Promotion data is missing; rely on the success state only`,
      ]);
    });
  });

  it('checks every target and names each refused one', async () => {
    const result = await validatePromotions(
      [
        promotion({ saasTargetUid: 'u1', targetName: 'a' }),
        promotion({
          saasTargetUid: 'u2',
          targetName: 'b',
          subscribe: [{ name: 'x', publisherUids: ['p'] }],
        }),
        promotion({ saasTargetUid: 'u3', targetName: null }),
      ],
      {
        reader: reader({
          [at('stage', 'pub-1')]: record({ success: false, has_succeeded_once: false }),
        }),
        versions: NO_VERSIONS,
        now: NOW,
      },
    );
    expect(result.errors.map((e) => [e.targetName, e.targetUid, e.channel])).toEqual([
      ['a', 'u1', 'stage'],
      ['b', 'u2', 'x'],
      [null, 'u3', 'stage'],
    ]);
  });
});

describe('pyTimedeltaStr', () => {
  // Expected: Python str(timedelta(...)).
  it.each([
    [0, '0:00:00'],
    [1, '0:00:00.000001'],
    [(3 * 86400 + 5) * 1e6, '3 days, 0:00:05'],
    [86400e6, '1 day, 0:00:00'],
    [-1e6, '-1 day, 23:59:59'],
    [-2 * 86400e6 + 7, '-2 days, 0:00:00.000007'],
    [(11 * 3600 + 59 * 60 + 59) * 1e6 + 500000, '11:59:59.500000'],
  ])('%s µs → %s', (micros, expected) => {
    expect(pyTimedeltaStr(micros)).toBe(expected);
  });
});
