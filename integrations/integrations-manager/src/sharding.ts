import type {
  IntegrationsManagerQuery,
  ManagerDeployResourcesFragment,
} from './integrations-manager.generated.ts';

type Integration = NonNullable<IntegrationsManagerQuery['integrations']>[number];
export type ManagedEntry = NonNullable<Integration['managed']>[number];
export type ManagedSpec = ManagedEntry['spec'];
type Sharding = NonNullable<ManagedEntry['sharding']>;

/** A shard's own settings (`shardSpecOverrides[]` of the key strategies). */
interface ShardOverride {
  readonly imageRef?: string | null;
  readonly disabled?: boolean | null;
  readonly resources?: ManagerDeployResourcesFragment | null;
}

/**
 * One pod (Deployment/StatefulSet) of an integration, as the original's
 * ShardSpec: `shards`/`shardId` are strings, empty for key sharding without
 * sub-shards (then no SHARDS/SHARD_ID env), and `"0"` counts as set.
 */
export interface ShardSpec {
  readonly shards: string;
  readonly shardId: string;
  readonly shardKey: string;
  readonly shardNameSuffix: string;
  readonly extraArgs: string;
  readonly overrides: ShardOverride | null;
}

/** The one pod of an integration without sharding, no extra arguments. */
export const ONE_SHARD: ShardSpec = {
  shards: '1',
  shardId: '0',
  shardKey: '',
  shardNameSuffix: '',
  extraArgs: '',
  overrides: null,
};

/** What the key strategies enumerate (the original's minimal queries). */
export interface ShardingObjects {
  readonly clusters: ReadonlyArray<{
    readonly name: string;
    readonly disable?: { readonly integrations?: readonly string[] | null } | null;
  }>;
  readonly awsAccounts: ReadonlyArray<{
    readonly name: string;
    readonly disable?: { readonly integrations?: readonly string[] | null } | null;
  }>;
  readonly ocmOrganizations: ReadonlyArray<{ readonly name: string; readonly orgId: string }>;
}

/** Bad sharding data: the caller names the integration file. */
export class ShardingError extends Error {}

/** The key strategies and the flag each needs in the integration's CLI. */
const KEY_STRATEGIES: Record<string, string> = {
  'per-openshift-cluster': '--cluster-name',
  'per-aws-account': '--account-name',
  'per-ocm-organization': '--org-id',
};

const SHARDING_STRATEGIES: readonly string[] = ['static', ...Object.keys(KEY_STRATEGIES)];

/**
 * The shard specs of one managed entry of `integration`, whose CLI takes
 * the flags `flags` (e.g. `--cluster-name`). No sharding is one static shard.
 * `flags` is undefined for an integration this CLI does not implement: its
 * pods run the original's image (or another upstream's), whose CLI we cannot
 * ask, so the strategy's argument is rendered as the original's manager renders
 * it for its own integrations, unchecked (that CLI refuses a wrong one when its
 * pod starts).
 */
export function buildShardSpecs(
  integration: string,
  flags: ReadonlySet<string> | undefined,
  managed: Pick<ManagedEntry, 'spec' | 'sharding'>,
  objects: ShardingObjects,
): ShardSpec[] {
  const sharding: Sharding = managed.sharding ?? { strategy: 'static', shards: 1 };
  const extraArgs = managed.spec.extraArgs ?? '';
  if (sharding.strategy === 'static') {
    const n = 'shards' in sharding ? sharding.shards : 1;
    if (!Number.isInteger(n) || n < 1) {
      throw new ShardingError(`static sharding needs at least one shard, got ${n}`);
    }
    return Array.from({ length: n }, (_, s) => ({
      shards: String(n),
      shardId: String(s),
      shardKey: '',
      shardNameSuffix: n > 1 ? `-${s}` : '',
      extraArgs,
      overrides: null,
    }));
  }
  const flag = KEY_STRATEGIES[sharding.strategy];
  if (!flag) {
    throw new ShardingError(
      `unknown sharding strategy '${sharding.strategy}' (known: ${SHARDING_STRATEGIES.join(', ')})`,
    );
  }
  if (flags && !flags.has(flag)) {
    throw new ShardingError(
      `integration ${integration} does not support the argument ${flag}, required by the '${sharding.strategy}' sharding strategy`,
    );
  }
  const enabled = <T extends ShardingObjects['clusters'][number]>(items: readonly T[]) =>
    items.filter((i) => !(i.disable?.integrations ?? []).includes(integration));

  if (sharding.strategy === 'per-openshift-cluster') {
    const list = 'clusterOverrides' in sharding ? (sharding.clusterOverrides ?? []) : [];
    const overrides = new Map(list.map((o) => [o.shard.name, o]));
    return enabled(objects.clusters).flatMap((c) => {
      const o = overrides.get(c.name);
      const base: ShardSpec = {
        shards: '',
        shardId: '',
        shardKey: c.name,
        shardNameSuffix: `-${c.name}`,
        extraArgs: `${extraArgs} --cluster-name ${c.name}`,
        overrides: o
          ? { imageRef: o.imageRef, disabled: o.disabled, resources: o.resources }
          : null,
      };
      const sub = o?.subSharding;
      if (!sub?.strategy) return [base];
      if (sub.strategy !== 'static') {
        throw new ShardingError(
          `sub-sharding strategy '${sub.strategy}' of cluster ${c.name} is not allowed (only static)`,
        );
      }
      return Array.from({ length: sub.shards }, (_, s) => ({
        ...base,
        shards: String(sub.shards),
        shardId: String(s),
        shardNameSuffix: `${base.shardNameSuffix}-${s}`,
      }));
    });
  }
  if (sharding.strategy === 'per-aws-account') {
    const list = 'awsAccountOverrides' in sharding ? (sharding.awsAccountOverrides ?? []) : [];
    const overrides = new Map(list.map((o) => [o.shard.name, o]));
    return enabled(objects.awsAccounts).map((a) => ({
      shards: '',
      shardId: '',
      shardKey: a.name,
      shardNameSuffix: `-${a.name}`,
      extraArgs: `${extraArgs} --account-name ${a.name}`,
      overrides: overrides.get(a.name) ?? null,
    }));
  }
  const list =
    'ocmOrganizationOverrides' in sharding ? (sharding.ocmOrganizationOverrides ?? []) : [];
  const overrides = new Map(list.map((o) => [o.shard.name, o]));
  return objects.ocmOrganizations.map((org) => ({
    shards: '',
    shardId: '',
    shardKey: org.orgId,
    shardNameSuffix: `-${org.orgId.toLowerCase()}`,
    extraArgs: `${extraArgs} --org-id ${org.orgId}`,
    overrides: overrides.get(org.name) ?? null,
  }));
}
