import { describe, expect, it } from 'vitest';
import { buildShardSpecs, type ManagedSpec, type ShardingObjects } from './sharding.ts';

const spec = { extraArgs: '--flag' } as ManagedSpec;
const objects: ShardingObjects = {
  clusters: [
    { name: 'c1' },
    { name: 'c2', disable: { integrations: ['other'] } },
    { name: 'c3', disable: { integrations: ['foo'] } },
  ],
  awsAccounts: [{ name: 'a1' }, { name: 'a2', disable: { integrations: ['foo'] } }],
  ocmOrganizations: [{ name: 'org-one', orgId: 'ABC123' }],
};
const all = new Set(['--cluster-name', '--account-name', '--org-id']);
const resources = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: null, memory: '2Gi' } };

const shard = (over: Record<string, unknown>) => ({
  shards: '',
  shardId: '',
  shardKey: '',
  shardNameSuffix: '',
  extraArgs: '--flag',
  overrides: null,
  ...over,
});

describe('buildShardSpecs', () => {
  it.each([
    {
      title: 'no sharding: one static shard "0" of "1", no suffix',
      sharding: null,
      want: [shard({ shards: '1', shardId: '0' })],
    },
    {
      title: 'static 3: ids 0..2, suffix -i',
      sharding: { strategy: 'static', shards: 3 },
      want: [0, 1, 2].map((i) =>
        shard({ shards: '3', shardId: String(i), shardNameSuffix: `-${i}` }),
      ),
    },
    {
      title: 'per-openshift-cluster: one shard per cluster not disabling the integration',
      sharding: { strategy: 'per-openshift-cluster', clusterOverrides: null },
      want: ['c1', 'c2'].map((c) =>
        shard({ shardKey: c, shardNameSuffix: `-${c}`, extraArgs: `--flag --cluster-name ${c}` }),
      ),
    },
    {
      title: 'per-openshift-cluster: overrides, disabled, static sub-sharding',
      sharding: {
        strategy: 'per-openshift-cluster',
        clusterOverrides: [
          { shard: { name: 'c1' }, imageRef: 'abc', disabled: true, resources, subSharding: null },
          {
            shard: { name: 'c2' },
            imageRef: null,
            disabled: null,
            resources: null,
            subSharding: { strategy: 'static', shards: 2 },
          },
        ],
      },
      want: [
        shard({
          shardKey: 'c1',
          shardNameSuffix: '-c1',
          extraArgs: '--flag --cluster-name c1',
          overrides: { imageRef: 'abc', disabled: true, resources },
        }),
        ...[0, 1].map((i) =>
          shard({
            shards: '2',
            shardId: String(i),
            shardKey: 'c2',
            shardNameSuffix: `-c2-${i}`,
            extraArgs: '--flag --cluster-name c2',
            overrides: { imageRef: null, disabled: null, resources: null },
          }),
        ),
      ],
    },
    {
      title: 'per-aws-account: one shard per enabled account, override by name',
      sharding: {
        strategy: 'per-aws-account',
        awsAccountOverrides: [
          { shard: { name: 'a1' }, imageRef: null, disabled: true, resources: null },
        ],
      },
      want: [
        shard({
          shardKey: 'a1',
          shardNameSuffix: '-a1',
          extraArgs: '--flag --account-name a1',
          overrides: { shard: { name: 'a1' }, imageRef: null, disabled: true, resources: null },
        }),
      ],
    },
    {
      title: 'per-ocm-organization: key orgId, suffix lower-cased',
      sharding: { strategy: 'per-ocm-organization', ocmOrganizationOverrides: null },
      want: [
        shard({
          shardKey: 'ABC123',
          shardNameSuffix: '-abc123',
          extraArgs: '--flag --org-id ABC123',
        }),
      ],
    },
  ])('$title', ({ sharding, want }) => {
    expect(
      buildShardSpecs(
        'foo',
        all,
        { spec, sharding } as Parameters<typeof buildShardSpecs>[2],
        objects,
      ),
    ).toEqual(want);
  });

  it.each([
    ['per-aws-account', '--account-name a1', '-a1'],
    ['per-openshift-cluster', '--cluster-name c1', '-c1'],
    ['per-ocm-organization', '--org-id ABC123', '-abc123'],
  ])(
    "%s of an integration this CLI does not implement: the original's argument, unchecked",
    (strategy, args, suffix) => {
      // terraform-resources & co.: the original's image runs them, its CLI takes the argument.
      const shards = buildShardSpecs(
        'foo',
        undefined,
        { spec, sharding: { strategy } } as Parameters<typeof buildShardSpecs>[2],
        objects,
      );
      expect(shards[0]).toMatchObject({ extraArgs: `--flag ${args}`, shardNameSuffix: suffix });
    },
  );

  it.each([
    [
      'an unknown strategy',
      { strategy: 'per-moon' },
      new Set<string>(),
      /unknown sharding strategy 'per-moon'/,
    ],
    [
      'per-openshift-cluster without --cluster-name',
      { strategy: 'per-openshift-cluster' },
      new Set<string>(),
      /does not support the argument --cluster-name/,
    ],
    [
      'per-aws-account without --account-name',
      { strategy: 'per-aws-account' },
      new Set(['--cluster-name']),
      /--account-name/,
    ],
    [
      'per-ocm-organization without --org-id',
      { strategy: 'per-ocm-organization' },
      new Set<string>(),
      /--org-id/,
    ],
    [
      'a sub-sharding other than static',
      {
        strategy: 'per-openshift-cluster',
        clusterOverrides: [{ shard: { name: 'c1' }, subSharding: { strategy: 'hash', shards: 2 } }],
      },
      all,
      /sub-sharding strategy 'hash' of cluster c1/,
    ],
  ])('refuses %s', (_, sharding, flags, message) => {
    expect(() =>
      buildShardSpecs(
        'foo',
        flags,
        { spec, sharding } as Parameters<typeof buildShardSpecs>[2],
        objects,
      ),
    ).toThrow(message);
  });
});
