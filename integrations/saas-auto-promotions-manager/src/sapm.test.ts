import type { SaasNamespace } from '@qontract/saas';
import { rawSloDocument } from '@qontract/saas/test-support';
import { describe, expect, it } from 'vitest';
import { type OpenBatcherMergeRequest, reconcileBatches } from './batcher.ts';
import { cronMatches, isValidCron } from './cron.ts';
import {
  type Channel,
  combinedContentHash,
  computeDesiredState,
  hasDiff,
  type Publisher,
  type Subscriber,
} from './inventory.ts';
import {
  desiredState,
  PROMOTION_DATA_SEPARATOR,
  parseMergeRequests,
  renderDescription,
  renderTitle,
} from './merge-requests.ts';
import { renderMergeRequestContent } from './render.ts';

const silent = { info: () => {}, debug: () => {}, error: () => {} };

function publisher(sha: string, deployment: Partial<Publisher['deploymentByChannel']> | null) {
  return { uid: 'pub', commitSha: sha, deploymentByChannel: deployment } as unknown as Publisher;
}

function subscriber(overrides: Partial<Subscriber> = {}): Subscriber {
  return {
    uid: 'sub',
    saasName: 'saas',
    templateName: 'rt',
    ref: 'old',
    targetFilePath: '/services/a/saas.yml',
    namespace: { path: '/services/a/ns/prod.yml', name: 'prod' } as SaasNamespace,
    useTargetConfigHash: false,
    soakDays: 0,
    schedule: '* * * * *',
    blockedVersions: new Set(),
    hotfixVersions: new Set(),
    slos: null,
    channels: [],
    configHashesByChannel: new Map(),
    desiredRef: '',
    desiredHashes: [],
    ...overrides,
  };
}

const deployed = (success: boolean, checkIn: number | null = null) =>
  new Map([['ch', { success, saasFile: 'parent', targetConfigHash: 'h1', checkIn }]]);

const mr = (
  hashes: string[],
  options: { batchable?: boolean; failed?: boolean; channels?: string[] } = {},
): OpenBatcherMergeRequest<string> => ({
  raw: hashes.join('+'),
  contentHashes: new Set(hashes),
  channels: new Set(options.channels ?? ['ch']),
  failedMrCheck: options.failed ?? false,
  isBatchable: options.batchable ?? true,
});
const promotion = (hash: string, channel = 'ch') => ({
  contentHashes: new Set([hash]),
  channels: new Set([channel]),
});

describe('batcher (the original Batcher)', () => {
  it('opens one batch for unsubmitted promotions and keeps MRs still desired', () => {
    const diff = reconcileBatches([promotion('a'), promotion('b', 'other')], []);
    expect(diff.deletions).toEqual([]);
    expect(diff.additions).toEqual([
      { contentHashes: new Set(['a', 'b']), channels: new Set(['ch', 'other']), batchable: true },
    ]);
    expect(reconcileBatches([promotion('a')], [mr(['a'], { batchable: false })])).toEqual({
      deletions: [],
      additions: [],
    });
  });

  it('closes outdated MRs and unbatches a batch that failed its check', () => {
    const outdated = reconcileBatches([], [mr(['x'], { batchable: false })]);
    expect(outdated.deletions.map((d) => d.reason)).toEqual(['OUTDATED_CONTENT']);
    const failed = reconcileBatches(
      [promotion('a'), promotion('b')],
      [mr(['a', 'b'], { failed: true })],
    );
    expect(failed.deletions.map((d) => [d.mr.raw, d.reason])).toEqual([
      ['a+b', 'MISSING_UNBATCHING'],
    ]);
    expect(failed.additions).toEqual([
      { contentHashes: new Set(['a']), channels: new Set(['ch']), batchable: false },
      { contentHashes: new Set(['b']), channels: new Set(['ch']), batchable: false },
    ]);
  });

  it('merges a batch with room into the new batch and splits at the limit', () => {
    const diff = reconcileBatches(
      ['a', 'b', 'c'].map((h) => promotion(h)),
      [mr(['a'])],
      2,
    );
    expect(diff.deletions.map((d) => d.reason)).toEqual(['NEW_BATCH']);
    expect(diff.additions.map((a) => [...a.contentHashes])).toEqual([['b', 'c'], ['a']]);
  });
});

describe('desired state and content hash (the original Subscriber)', () => {
  it('hashes the subscribers as the original does (sha256 of its text, 32 hex digits)', () => {
    const s = subscriber({
      desiredRef: 'abc',
      desiredHashes: [{ channel: 'ch', parentSaas: 'parent', targetConfigHash: 'h1' }],
    });
    // Computed with the original's f-string in Python.
    expect(combinedContentHash([s])).toBe('d23a70b568d27a37ec7726414778a713');
    const t = subscriber({
      targetFilePath: '/x.yml',
      namespace: { path: '/ns.yml' } as SaasNamespace,
      desiredRef: 'def',
    });
    expect(combinedContentHash([t])).toBe('c16be949efe666f2fac741e24a63746f');
    const { promotions } = desiredState([s]);
    expect(promotions).toEqual([
      { contentHashes: new Set(['d23a70b568d27a37ec7726414778a713']), channels: new Set(['']) },
    ]);
  });

  it('promotes the commit every publisher deployed with success, after soak days, not a blocked one', async () => {
    const now = new Date('2024-01-10T12:00:00Z');
    const dayMicros = 86_400_000_000;
    const channel = (p: Publisher): Channel => ({ name: 'ch', publishers: [p] });
    const ok = subscriber({ channels: [channel(publisher('new', deployed(true)))] });
    await computeDesiredState(ok, now, silent);
    expect(ok.desiredRef).toBe('new');
    expect(hasDiff(ok)).toBe(true);

    const failed = subscriber({ channels: [channel(publisher('new', deployed(false)))] });
    await computeDesiredState(failed, now, silent);
    expect(failed.desiredRef).toBe('old');
    expect(hasDiff(failed)).toBe(false);

    const soaking = subscriber({
      soakDays: 2,
      channels: [channel(publisher('new', deployed(true, now.getTime() * 1000 - dayMicros)))],
    });
    await computeDesiredState(soaking, now, silent);
    expect(soaking.desiredRef).toBe('old');

    const blocked = subscriber({
      blockedVersions: new Set(['new']),
      channels: [channel(publisher('new', deployed(true)))],
    });
    await computeDesiredState(blocked, now, silent);
    expect(blocked.desiredRef).toBe('old');

    const hashes = subscriber({
      useTargetConfigHash: true,
      channels: [channel(publisher('new', deployed(true)))],
    });
    await computeDesiredState(hashes, now, silent);
    expect(hashes.desiredHashes).toEqual([
      { channel: 'ch', parentSaas: 'parent', targetConfigHash: 'h1' },
    ]);
  });

  it('holds a subscriber with a breached SLO, unless its new ref is a hotfix', async () => {
    const now = new Date('2024-01-10T12:00:00Z');
    const doc = rawSloDocument('app-slos');
    const slo = doc.slos[0]!;
    const channels = [{ name: 'ch', publishers: [publisher('new', deployed(true))] }];
    const asked: string[] = [];
    const breached = async (docs: readonly { name: string }[]) => {
      asked.push(...docs.map((d) => d.name));
      return [
        {
          documentName: 'app-slos',
          namespaceName: 'prod',
          clusterName: 'c',
          serviceName: 'a',
          slo,
          currentValue: 0.95,
        },
      ];
    };
    const lines: string[] = [];
    const log = { ...silent, info: (m: string) => void lines.push(m) };
    const held = subscriber({ slos: [doc], channels });
    await computeDesiredState(held, now, log, breached);
    expect(held.desiredRef).toBe('old');
    expect(lines).toEqual([
      'Subscriber at path /services/a/saas.yml promotion stopped because following breached SLOs',
      'SLO:availability of document app-slos is breached. Current value:0.950000 Expected:0.990000 ',
    ]);

    const hotfix = subscriber({ slos: [doc], hotfixVersions: new Set(['new']), channels });
    await computeDesiredState(hotfix, now, log, breached);
    expect(hotfix.desiredRef).toBe('new');
    // Without SLO documents, or as a hotfix, Prometheus is not asked.
    await computeDesiredState(subscriber({ channels }), now, log, breached);
    expect(asked).toEqual(['app-slos']);
  });

  it('matches deployment windows as croniter with day_or=False', () => {
    const monday = new Date('2024-01-08T09:30:00Z');
    expect(cronMatches('* * * * *', monday)).toBe(true);
    expect(cronMatches('30 9 * * mon', monday)).toBe(true);
    // The minute matches, whatever its seconds (croniter's minute precision).
    expect(cronMatches('30 9 * * mon', new Date('2024-01-08T09:30:45Z'))).toBe(true);
    expect(cronMatches('0 9 1-7 * mon', monday)).toBe(false);
    expect(cronMatches('0-29 9 * * *', monday)).toBe(false);
    // Day of month AND day of week: the 8th is a Monday, not a Tuesday.
    expect(cronMatches('* * 8 * 2', monday)).toBe(false);
    expect(cronMatches('*/15 8-10 * jan 1-5', monday)).toBe(true);
    expect(isValidCron('61 * * * *')).toBe(false);
    expect(isValidCron('* * *')).toBe(false);
  });
});

describe('merge request text (the original Renderer and MRParser)', () => {
  it("renders the original's title and data block", () => {
    // Computed in Python: int(sha256(channels).hexdigest(), 16) % 10**8.
    expect(renderTitle('example-app-stage-deployed', 1)).toBe(
      '[SAPM] auto-promotion ID 12424523 - batch size: 1',
    );
    expect(renderTitle('a,b', 3)).toBe('[SAPM] auto-promotion ID 2048693 - batch size: 3');
    const description = renderDescription('h1,h2', 'a,b', true);
    const data = description.split(PROMOTION_DATA_SEPARATOR)[1];
    expect(data).toBe(
      '\n\nchannels: a,b\n\ncontent_hashes: h1,h2\n\nis_batchable: True\n\nkind: batcher\n\nsapm_version: 2.3.0\n\nThis merge request is approved automatically.\n\n/lgtm\n        ',
    );
  });

  it('keeps valid batcher MRs and closes broken, old, conflicting and duplicate ones', async () => {
    const good = renderDescription('h1', 'ch', false);
    const mrs = [
      { id: 'good', description: good, hasConflicts: false, webUrl: 'u1' },
      { id: 'dup', description: good, hasConflicts: false, webUrl: 'u2' },
      { id: 'nosep', description: 'hello', hasConflicts: false, webUrl: 'u3' },
      {
        id: 'old',
        description: good.replace('sapm_version: 2.3.0', 'sapm_version: 2.2.0'),
        hasConflicts: false,
        webUrl: 'u4',
      },
      { id: 'conflict', description: good, hasConflicts: true, webUrl: 'u5' },
      {
        id: 'scheduler',
        description: good.replace('kind: batcher', 'kind: scheduler'),
        hasConflicts: false,
        webUrl: 'u6',
      },
    ];
    const parsed = await parseMergeRequests(mrs, async () => true);
    expect(parsed.open).toEqual([
      {
        raw: mrs[0],
        contentHashes: new Set(['h1']),
        channels: new Set(['ch']),
        failedMrCheck: true,
        isBatchable: false,
      },
    ]);
    expect(parsed.close.map((c) => [c.mr.id, c.comment, c.log])).toEqual([
      [
        'nosep',
        'Closing this MR because of bad data separator format.',
        'Bad data separator format. Closing u3',
      ],
      [
        'old',
        'Closing this MR because it has an outdated SAPM version 2.2.0.',
        'Old MR version detected: 2.2.0. Closing u4',
      ],
      [
        'dup',
        'Closing this MR because there is already another MR open with identical content.',
        'Duplicate MR detected. Closing u2',
      ],
      [
        'conflict',
        'Closing this MR because of a merge-conflict.',
        'Merge-conflict detected. Closing u5',
      ],
    ]);
  });
});

describe('saas-file edit (the original render_merge_request_content)', () => {
  const file = `---
$schema: /app-sre/saas-file-2.yml

# who owns this
name: saas
resourceTemplates:
- name: rt # the template
  url: https://github.com/org/repo
  targets:
  - namespace:
      $ref: /services/a/ns/stage.yml
    ref: main
    promotion:
      publish:
      - ch
  - namespace:
      $ref: /services/a/ns/prod.yml
    ref: 'old' # bumped by SAPM
    promotion:
      auto: true
      subscribe:
      - ch
      promotion_data:
      - channel: ch
        data:
        - parent_saas: parent
          target_config_hash: h0
          type: parent_saas_config
`;

  it("bumps the subscriber's ref and config hash, keeping comments, order, quotes and indentation", () => {
    const s = subscriber({
      channels: [{ name: 'ch', publishers: [] }],
      desiredRef: 'new',
      desiredHashes: [
        { channel: 'ch', parentSaas: 'parent', targetConfigHash: 'h1' },
        { channel: 'other', parentSaas: 'p2', targetConfigHash: 'h2' },
      ],
    });
    expect(renderMergeRequestContent(s, file)).toBe(
      file
        .replace("ref: 'old'", "ref: 'new'")
        .replace('target_config_hash: h0', 'target_config_hash: h1')
        .concat(
          '      - channel: other\n        data:\n        - parent_saas: p2\n          target_config_hash: h2\n          type: parent_saas_config\n',
        ),
    );
  });

  it('leaves targets of other namespaces or channels alone', () => {
    const s = subscriber({ channels: [{ name: 'elsewhere', publishers: [] }], desiredRef: 'new' });
    expect(renderMergeRequestContent(s, file)).toBe(file);
  });
});
