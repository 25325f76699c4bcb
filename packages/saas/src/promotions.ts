/**
 * Promotions of openshift-saas-deploy: target uids, target config hashes,
 * channels and the per-target promotion a deployment carries (the original's
 * `SaasHerder` promotion parts and `Promotion` model). The state, the gate and
 * publishing live in the `promotions-*.ts` files beside this one.
 */
import { createHash } from 'node:crypto';
import { blake2s } from '@noble/hashes/blake2.js';
import { QontractError } from '@qontract/core';
import { type PyJsonModel, pyFloatRepr, pyJsonDumps } from '@qontract/pycompat';
import type { SaasFile, SaasResourceTemplate, SaasTarget } from './model.ts';

/** `USED_FOR_SECURITY=true` (any case) switches hashes to FIPS-approved ones, as upstream. */
export function usedForSecurity(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.USED_FOR_SECURITY ?? 'false').toLowerCase() === 'true';
}

/** What identifies a target: its name and its namespace on a cluster. */
export interface TargetIdentity {
  readonly name: string | null;
  readonly namespace: { readonly name: string; readonly cluster: { readonly name: string } };
}

/**
 * A target's uid, the key of its promotion records in the state:
 * BLAKE2s with a 20-byte digest (a parameter of BLAKE2s, so not a cut
 * blake2s256) of `<saas>:<rt>:<target name or default>:<cluster>:<namespace>`,
 * or the first 20 bytes of sha256 under USED_FOR_SECURITY. It must equal the
 * original's so both read and write the same records.
 */
export function targetUid(
  saasFileName: string,
  resourceTemplateName: string,
  target: TargetIdentity,
  options: { usedForSecurity?: boolean } = {},
): string {
  const data = Buffer.from(
    `${saasFileName}:${resourceTemplateName}:${target.name || 'default'}:${target.namespace.cluster.name}:${target.namespace.name}`,
    'utf8',
  );
  if (options.usedForSecurity ?? usedForSecurity()) {
    return createHash('sha256').update(data).digest().subarray(0, 20).toString('hex');
  }
  return Buffer.from(blake2s(data, { dkLen: 20 })).toString('hex');
}

/** A value the original holds as a Python float (pydantic `float` fields): `99` is written `99.0`. */
class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

/**
 * How `targetConfigState`'s floats are written: with it, `pyJsonDumps` gives
 * the original's JSON text (the config trigger stores the state this way).
 */
export const targetConfigStateModel: PyJsonModel = {
  leaf: (v) => (v instanceof PyFloat ? pyFloatRepr(v.value) : undefined),
};

/** `json_dumps(value, compact=True)`: sorted keys, no spaces. */
function compactJson(value: unknown): string {
  return pyJsonDumps(value, { sortKeys: true, separators: [',', ':'] });
}

type Secret = { path: string; field: string; version: number | null; format: string | null };

/** A VaultSecret as pydantic dumps it: `by_alias` writes `format`, plain `model_dump()` `q_format`. */
function secretDump(s: Secret, byAlias: boolean) {
  return {
    path: s.path,
    field: s.field,
    version: s.version,
    [byAlias ? 'format' : 'q_format']: s.format,
  };
}

function secretParametersDump(
  list: readonly { name: string; secret: Secret }[] | null,
  byAlias: boolean,
) {
  return list && list.length > 0
    ? list.map((p) => ({ name: p.name, secret: secretDump(p.secret, byAlias) }))
    : null;
}

function promotionDump(p: NonNullable<SaasTarget['promotion']>) {
  return {
    auto: p.auto,
    publish: p.publish,
    subscribe: p.subscribe,
    redeployOnPublisherConfigChange: p.redeployOnPublisherConfigChange,
    soakDays: p.soakDays,
    schedule: p.schedule,
    promotion_data:
      p.promotion_data?.map((pd) => ({
        channel: pd.channel,
        // A ParentSaasPromotion_v1 has its two fields (null when unset); any
        // other data type is only `{type}` in the original's model.
        data:
          (pd.data as readonly ParentSaasPromotionData[] | null)?.map((d) =>
            'parent_saas' in d || 'target_config_hash' in d
              ? {
                  type: d.type,
                  parent_saas: d.parent_saas,
                  target_config_hash: d.target_config_hash,
                }
              : { type: d.type },
          ) ?? null,
      })) ?? null,
  };
}

function slosDump(slos: NonNullable<SaasTarget['slos']>) {
  return slos.map((doc) => ({
    name: doc.name,
    namespaces: doc.namespaces.map((n) => ({
      prometheusAccess: n.prometheusAccess
        ? {
            url: n.prometheusAccess.url,
            username: n.prometheusAccess.username && secretDump(n.prometheusAccess.username, true),
            password: n.prometheusAccess.password && secretDump(n.prometheusAccess.password, true),
          }
        : null,
      namespace: {
        name: n.namespace.name,
        app: { name: n.namespace.app.name },
        cluster: {
          name: n.namespace.cluster.name,
          automationToken:
            n.namespace.cluster.automationToken &&
            secretDump(n.namespace.cluster.automationToken, true),
          prometheusUrl: n.namespace.cluster.prometheusUrl,
          spec: n.namespace.cluster.spec ? { private: n.namespace.cluster.spec.private } : null,
        },
      },
      SLONamespace: n.SLONamespace ? { name: n.SLONamespace.name } : null,
    })),
    slos:
      doc.slos?.map((s) => ({
        name: s.name,
        expr: s.expr,
        SLIType: s.SLIType,
        SLOParameters: { window: s.SLOParameters.window },
        SLOTarget: new PyFloat(s.SLOTarget),
        SLOTargetUnit: s.SLOTargetUnit,
      })) ?? null,
  }));
}

/**
 * The target's "config state" as the original builds it for the config
 * trigger and the target config hash: every field is present (null when
 * unset), JSON parameters as compact JSON text, and three fields only when set.
 * Field names follow the original's pydantic dumps (aliases or Python names).
 */
export function targetConfigState(
  saasFile: SaasFile,
  resourceTemplate: SaasResourceTemplate,
  target: SaasTarget,
): Record<string, unknown> {
  const state: Record<string, unknown> = {
    name: target.name,
    ref: target.ref,
    promotion: target.promotion ? promotionDump(target.promotion) : null,
    secretParameters: secretParametersDump(target.secretParameters, true),
    slos: target.slos && target.slos.length > 0 ? slosDump(target.slos) : null,
    upstream: target.upstream
      ? {
          instance: {
            name: target.upstream.instance.name,
            serverUrl: target.upstream.instance.serverUrl,
          },
          name: target.upstream.name,
        }
      : null,
    images:
      target.images && target.images.length > 0
        ? target.images.map((i) => ({
            org: { name: i.org.name, instance: { url: i.org.instance.url } },
            name: i.name,
          }))
        : null,
    disable: target.disable,
    delete: target.delete,
    namespace: {
      name: target.namespace.name,
      cluster: {
        name: target.namespace.cluster.name,
        serverUrl: target.namespace.cluster.serverUrl,
      },
      app: { name: target.namespace.app.name },
    },
    saas_file_parameters: saasFile.parameters === null ? null : compactJson(saasFile.parameters),
    parameters: target.parameters === null ? null : compactJson(target.parameters),
    saas_file_managed_resource_types: saasFile.managedResourceTypes,
    url: resourceTemplate.url,
    path: resourceTemplate.path,
    rt_parameters:
      resourceTemplate.parameters === null ? null : compactJson(resourceTemplate.parameters),
  };
  if (saasFile.managedResourceNames && saasFile.managedResourceNames.length > 0) {
    state.saas_file_managed_resource_names = saasFile.managedResourceNames.map((m) => ({
      resource: m.resource,
      resource_names: m.resourceNames,
    }));
  }
  const rtSecrets = secretParametersDump(resourceTemplate.secretParameters, false);
  if (rtSecrets) state.rt_secretparameters = rtSecrets;
  const sfSecrets = secretParametersDump(saasFile.secretParameters, false);
  if (sfSecrets) state.saas_file_secretparameters = sfSecrets;
  return state;
}

/**
 * First 16 hex of sha256 over the config state's JSON text (sorted keys,
 * Python separators): the `target_config_hash` of promotion records, which
 * saas-auto-promotions-manager writes into `promotion_data`.
 */
export function targetConfigHash(
  saasFile: SaasFile,
  resourceTemplate: SaasResourceTemplate,
  target: SaasTarget,
): string {
  const text = pyJsonDumps(targetConfigState(saasFile, resourceTemplate, target), {
    sortKeys: true,
    model: targetConfigStateModel,
  });
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

/**
 * Channel name → uids of the targets publishing to it, over all saas files
 * (deleted targets publish nothing), in saas file order.
 */
export function promotionChannels(
  allSaasFiles: readonly SaasFile[],
  options: { usedForSecurity?: boolean } = {},
): Map<string, string[]> {
  const channels = new Map<string, string[]>();
  for (const sf of allSaasFiles) {
    for (const rt of sf.resourceTemplates) {
      for (const target of rt.targets) {
        if (!target.promotion || target.delete) continue;
        for (const channel of target.promotion.publish ?? []) {
          const uids = channels.get(channel) ?? [];
          uids.push(targetUid(sf.name, rt.name, target, options));
          channels.set(channel, uids);
        }
      }
    }
  }
  return channels;
}

/** Commits of a code component that are blocked, or hotfixes that skip the gate, by repo url. */
export interface CodeComponentVersions {
  readonly blocked: ReadonlyMap<string, ReadonlySet<string>>;
  readonly hotfix: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Blocked and hotfix versions of the apps of the saas files in this run. */
export function codeComponentVersions(saasFiles: readonly SaasFile[]): CodeComponentVersions {
  const blocked = new Map<string, Set<string>>();
  const hotfix = new Map<string, Set<string>>();
  const add = (into: Map<string, Set<string>>, url: string, versions: readonly string[] | null) => {
    for (const v of versions ?? []) {
      const set = into.get(url) ?? new Set<string>();
      set.add(v);
      into.set(url, set);
    }
  };
  for (const sf of saasFiles) {
    for (const cc of sf.app.codeComponents ?? []) {
      add(blocked, cc.url, cc.blockedVersions);
      add(hotfix, cc.url, cc.hotfixVersions);
    }
  }
  return { blocked, hotfix };
}

/** A subscribed channel and the uids of the targets publishing to it. */
export interface PromotionChannel {
  readonly name: string;
  readonly publisherUids: readonly string[];
}

/** The parent-saas data of a channel (the only `promotion_data` type there is). */
interface ParentSaasPromotionData {
  readonly type: string;
  readonly parent_saas?: string | null;
  readonly target_config_hash?: string | null;
}

/**
 * What a deployed target takes part in (the original's `Promotion`): the
 * commit it deployed, the channels it publishes to and subscribes to, and
 * where it is, for messages.
 */
export interface TargetPromotion {
  readonly saasFile: string;
  readonly resourceTemplate: string;
  readonly targetName: string | null;
  readonly cluster: string;
  readonly namespace: string;
  /** The resource template url: blocked/hotfix versions are looked up by it. */
  readonly url: string;
  readonly commitSha: string;
  readonly targetConfigHash: string;
  readonly saasTargetUid: string;
  readonly soakDays: number;
  readonly auto: boolean | null;
  readonly publish: readonly string[] | null;
  /** Empty when the target subscribes to nothing. */
  readonly subscribe: readonly PromotionChannel[];
  readonly promotionData: readonly {
    readonly channel: string | null;
    readonly data: readonly ParentSaasPromotionData[] | null;
  }[];
}

/**
 * The promotion of a target that deployed `commitSha`, or null without a
 * `promotion` section. A subscribed channel nobody publishes to fails the
 * target (upstream: a KeyError that fails it the same way).
 */
export function targetPromotion(
  saasFile: SaasFile,
  resourceTemplate: SaasResourceTemplate,
  target: SaasTarget,
  commitSha: string,
  channels: ReadonlyMap<string, readonly string[]>,
  options: { usedForSecurity?: boolean; targetConfigHash?: string } = {},
): TargetPromotion | null {
  const promotion = target.promotion;
  if (!promotion) return null;
  const subscribe = (promotion.subscribe ?? []).map((name): PromotionChannel => {
    const publisherUids = channels.get(name);
    if (!publisherUids) {
      throw new QontractError(
        `[${saasFile.name}/${resourceTemplate.name}] target ${target.name ?? 'default'} ` +
          `(${target.namespace.cluster.name}/${target.namespace.name}) subscribes to channel ` +
          `${name}, which no target publishes to`,
      );
    }
    return { name, publisherUids };
  });
  return {
    saasFile: saasFile.name,
    resourceTemplate: resourceTemplate.name,
    targetName: target.name,
    cluster: target.namespace.cluster.name,
    namespace: target.namespace.name,
    url: resourceTemplate.url,
    commitSha,
    targetConfigHash:
      options.targetConfigHash ?? targetConfigHash(saasFile, resourceTemplate, target),
    saasTargetUid: targetUid(saasFile.name, resourceTemplate.name, target, options),
    soakDays: promotion.soakDays ?? 0,
    auto: promotion.auto,
    publish: promotion.publish,
    subscribe,
    promotionData: promotion.promotion_data ?? [],
  };
}
