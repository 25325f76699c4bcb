/**
 * Publishers, channels and subscribers of the saas files (the original's
 * `SaasFilesInventory`, `Publisher` and `Subscriber`): plain data built from
 * the saas-file model, then the publishers' deployments read from the
 * promotion state, then each subscriber's desired ref and config hashes.
 */
import { createHash } from 'node:crypto';
import { QontractError, type SecretRef } from '@qontract/core';
import {
  parseCheckIn,
  type SaasFile,
  type SaasNamespace,
  type SloDetails,
  type SloDocument,
  targetUid,
} from '@qontract/saas';
import { cronMatches, isValidCron } from './cron.ts';

/** A publisher's deployment on a channel, as the promotion record says (saas file and hash required). */
export interface DeploymentInfo {
  readonly success: boolean;
  readonly saasFile: string;
  readonly targetConfigHash: string;
  /** Microseconds since the epoch, or null. */
  readonly checkIn: number | null;
}

export interface Publisher {
  readonly uid: string;
  readonly ref: string;
  readonly repoUrl: string;
  readonly codeAuth: SecretRef | null;
  readonly saasName: string;
  readonly appName: string;
  readonly resourceTemplateName: string;
  /** `None` when the target has no name, as the original prints it. */
  readonly targetName: string;
  readonly clusterName: string;
  readonly namespaceName: string;
  readonly redeployOnConfigChange: boolean;
  readonly channels: Set<string>;
  /** Filled by `fetchPublisherStates`. */
  commitSha: string;
  readonly deploymentByChannel: Map<string, DeploymentInfo | null>;
}

export interface Channel {
  readonly name: string;
  readonly publishers: Publisher[];
}

interface ConfigHash {
  readonly channel: string;
  readonly targetConfigHash: string;
  readonly parentSaas: string;
}

export interface Subscriber {
  readonly uid: string;
  readonly saasName: string;
  readonly templateName: string;
  readonly ref: string;
  /** The file the target lives in (`target.path` or the saas file's path). */
  readonly targetFilePath: string;
  readonly namespace: SaasNamespace;
  readonly useTargetConfigHash: boolean;
  readonly soakDays: number;
  readonly schedule: string;
  readonly blockedVersions: ReadonlySet<string>;
  /** Refs that skip the SLO gate (the code component's `hotfixVersions`). */
  readonly hotfixVersions: ReadonlySet<string>;
  /** The target's SLO documents: no promotion while one of their SLOs is breached. */
  readonly slos: readonly SloDocument[] | null;
  readonly channels: Channel[];
  readonly configHashesByChannel: Map<string, ConfigHash[]>;
  desiredRef: string;
  desiredHashes: ConfigHash[];
}

export interface Inventory {
  readonly publishers: Publisher[];
  readonly subscribers: Subscriber[];
}

interface Log {
  info(message: string): void;
  debug(message: string): void;
  error(message: string): void;
}

const activeTargets = (sf: SaasFile) =>
  sf.resourceTemplates.flatMap((rt) =>
    rt.targets.filter((t) => !t.disable && !t.delete && t.promotion).map((t) => ({ rt, t })),
  );

/**
 * Subscribers (targets with `promotion.auto`) and their channels first, then
 * the publishers of those channels; a subscriber with a channel nobody
 * publishes is left out with the original's error line.
 */
export function buildInventory(saasFiles: readonly SaasFile[], log: Log): Inventory {
  const channels = new Map<string, Channel>();
  const subscribers: Subscriber[] = [];
  for (const sf of saasFiles) {
    const blocked = new Map<string, Set<string>>();
    const hotfix = new Map<string, Set<string>>();
    for (const cc of sf.app.codeComponents ?? []) {
      blocked.set(cc.url, new Set([...(blocked.get(cc.url) ?? []), ...(cc.blockedVersions ?? [])]));
      hotfix.set(cc.url, new Set([...(hotfix.get(cc.url) ?? []), ...(cc.hotfixVersions ?? [])]));
    }
    for (const { rt, t } of activeTargets(sf)) {
      const promotion = t.promotion!;
      if (!promotion.auto) continue;
      const subscriber: Subscriber = {
        uid: targetUid(sf.name, rt.name, t),
        saasName: sf.name,
        templateName: rt.name,
        ref: t.ref,
        targetFilePath: t.path || sf.path,
        namespace: t.namespace,
        useTargetConfigHash: Boolean(promotion.redeployOnPublisherConfigChange),
        soakDays: promotion.soakDays ?? 0,
        schedule: promotion.schedule || '* * * * *',
        blockedVersions: blocked.get(rt.url) ?? new Set(),
        hotfixVersions: hotfix.get(rt.url) ?? new Set(),
        slos: t.slos && t.slos.length > 0 ? t.slos : null,
        channels: [],
        configHashesByChannel: new Map(),
        desiredRef: '',
        desiredHashes: [],
      };
      subscribers.push(subscriber);
      for (const pd of promotion.promotion_data ?? []) {
        if (!pd.channel) continue;
        for (const d of (pd.data ?? []) as ReadonlyArray<Record<string, unknown>>) {
          if (d.type !== 'parent_saas_config') continue;
          if (typeof d.parent_saas !== 'string' || typeof d.target_config_hash !== 'string') {
            throw new QontractError(
              `saas file ${sf.name} (${sf.path}): promotion_data of channel ${pd.channel} needs parent_saas and target_config_hash`,
            );
          }
          const list = subscriber.configHashesByChannel.get(pd.channel) ?? [];
          list.push({
            channel: pd.channel,
            parentSaas: d.parent_saas,
            targetConfigHash: d.target_config_hash,
          });
          subscriber.configHashesByChannel.set(pd.channel, list);
        }
      }
      for (const name of promotion.subscribe ?? []) {
        let channel = channels.get(name);
        if (!channel) {
          channel = { name, publishers: [] };
          channels.set(name, channel);
        }
        subscriber.channels.push(channel);
      }
    }
  }

  const publishers: Publisher[] = [];
  for (const sf of saasFiles) {
    for (const { rt, t } of activeTargets(sf)) {
      const promotion = t.promotion!;
      const publisher: Publisher = {
        uid: targetUid(sf.name, rt.name, t),
        ref: t.ref,
        repoUrl: rt.url,
        codeAuth: sf.authentication?.code ?? null,
        saasName: sf.name,
        appName: sf.app.name,
        resourceTemplateName: rt.name,
        targetName: t.name || 'None',
        clusterName: t.namespace.cluster.name,
        namespaceName: t.namespace.name,
        redeployOnConfigChange: Boolean(promotion.redeployOnPublisherConfigChange),
        channels: new Set(),
        commitSha: '',
        deploymentByChannel: new Map(),
      };
      for (const name of promotion.publish ?? []) {
        const channel = channels.get(name);
        if (!channel) continue;
        publisher.channels.add(name);
        channel.publishers.push(publisher);
      }
      publishers.push(publisher);
    }
  }

  const supported = subscribers.filter((s) => {
    const empty = s.channels.find((c) => c.publishers.length === 0);
    if (empty) log.error(`[${empty.name}] There must be at least one publisher per channel.`);
    return !empty;
  });
  return { publishers, subscribers: supported };
}

/** The deployment a promotion record describes, when it names its saas file and config hash. */
export function deploymentInfo(
  record: {
    success: boolean;
    saas_file: string | null;
    target_config_hash: string | null;
    check_in: string | null;
  },
  where: string,
): DeploymentInfo | null {
  if (!record.saas_file || !record.target_config_hash) return null;
  return {
    success: record.success,
    saasFile: record.saas_file,
    targetConfigHash: record.target_config_hash,
    checkIn: record.check_in ? parseCheckIn(record.check_in, where) : null,
  };
}

function validDeployment(p: Publisher, channel: Channel, log: Log): DeploymentInfo | null {
  const info = p.deploymentByChannel.get(channel.name);
  if (!info) {
    log.info(`[${channel.name}] Commit sha ${p.commitSha} not found in deployments`);
    return null;
  }
  if (!info.success) {
    log.info(`[${channel.name}] Commit sha ${p.commitSha} wasnt successfully deployed`);
    return null;
  }
  return info;
}

const DAY_MICROS = 86_400_000_000;

/** Soak time accumulated over every publisher of every channel, against `soakDays`. */
function passedSoakDays(s: Subscriber, nowMicros: number): boolean {
  let delta = 0;
  for (const channel of s.channels) {
    for (const p of channel.publishers) {
      const info = p.deploymentByChannel.get(channel.name);
      if (!info) return false;
      if (info.checkIn === null) continue;
      delta += nowMicros - info.checkIn;
    }
  }
  return delta >= s.soakDays * DAY_MICROS;
}

/**
 * The original's `_has_breached_slos`: a subscriber with SLO documents and a
 * ref that is not a hotfix is held while any SLO of them (every namespace of
 * each document) is breached. A failure to read them fails the run.
 */
async function heldBySlos(
  s: Subscriber,
  ref: string,
  log: Log,
  breachedSlos: ((documents: readonly SloDocument[]) => Promise<SloDetails[]>) | undefined,
): Promise<boolean> {
  if (!s.slos || !breachedSlos || s.hotfixVersions.has(ref)) return false;
  const breached = await breachedSlos(s.slos);
  if (breached.length === 0) return false;
  log.info(
    `Subscriber at path ${s.targetFilePath} promotion stopped because following breached SLOs`,
  );
  for (const b of breached) {
    // Python's %f: six decimals.
    log.info(
      `SLO:${b.slo.name} of document ${b.documentName} is breached. Current value:${b.currentValue.toFixed(6)} Expected:${b.slo.SLOTarget.toFixed(6)} `,
    );
  }
  return true;
}

/**
 * The subscriber's desired ref: the one commit all its publishers deployed
 * with success, soaked for `soakDays`, in the deployment window and not a
 * blocked version; else its current ref. With
 * `redeployOnPublisherConfigChange`, the config hashes its publishers
 * deployed too (the current one kept for a channel without a good deployment).
 */
export async function computeDesiredState(
  s: Subscriber,
  now: Date,
  log: Log,
  breachedSlos?: (documents: readonly SloDocument[]) => Promise<SloDetails[]>,
): Promise<void> {
  s.desiredRef = s.ref;
  s.desiredHashes = [];
  const refs = new Set<string>();
  let bad = false;
  outer: for (const channel of s.channels) {
    for (const p of channel.publishers) {
      if (!validDeployment(p, channel, log)) {
        bad = true;
        log.info(`[${channel.name}] publisher with uid ${p.uid} has unsuccessful deployment`);
        break outer;
      }
      refs.add(p.commitSha);
    }
  }
  const path = s.targetFilePath;
  if (bad) {
    log.info(`Subscriber at path ${path} promotion stopped because of bad publisher deployment`);
  } else if (refs.size !== 1) {
    log.info(
      `Publishers for subscriber at path ${path} have mismatching refs: {${[...refs].map((r) => `'${r}'`).join(', ')}}`,
    );
  } else if (!passedSoakDays(s, now.getTime() * 1000)) {
    log.debug(`Subscriber at path ${path} promotion stopped because of soak days`);
  } else if (!isValidCron(s.schedule)) {
    log.error(
      `Subscriber at ${path} has an invalid schedule declaration ${s.schedule}. We will block any promotion for that target until this is fixed.`,
    );
  } else if (!cronMatches(s.schedule, now)) {
    log.debug(
      `Subscriber at path ${path} promotion stopped because we are not in the deployment window ${s.schedule}`,
    );
  } else {
    const ref = [...refs][0] as string;
    if (await heldBySlos(s, ref, log, breachedSlos)) {
      // The SLO gate comes before the blocked versions, as the original's.
    } else if (s.blockedVersions.has(ref)) {
      log.info(`Subscriber at path ${path} promotion stopped because of blocked ref: ${ref}`);
    } else {
      s.desiredRef = ref;
    }
  }

  if (!s.useTargetConfigHash) return;
  for (const channel of s.channels) {
    const current = s.configHashesByChannel.get(channel.name)?.[0];
    const info = validDeployment(channel.publishers[0] as Publisher, channel, log);
    if (info) {
      s.desiredHashes.push({
        channel: channel.name,
        parentSaas: info.saasFile,
        targetConfigHash: info.targetConfigHash,
      });
    } else if (current) {
      s.desiredHashes.push(current);
    } else {
      log.info(`[${channel.name}] Cannot promote target_config_hash because of bad deployment`);
    }
  }
}

const hashKey = (h: ConfigHash) => `${h.channel}\0${h.parentSaas}\0${h.targetConfigHash}`;

/** Whether the subscriber's file must change: another ref, or a desired hash it does not have yet. */
export function hasDiff(s: Subscriber): boolean {
  const current = new Set([...s.configHashesByChannel.values()].flat().map(hashKey));
  return !(s.desiredHashes.every((h) => current.has(hashKey(h))) && s.desiredRef === s.ref);
}

const CONTENT_HASH_LENGTH = 32;

/** Python's repr of a str made of printable characters without quotes in it. */
const pyRepr = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

function compare(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The content hash of a group of subscribers, whatever their order: the
 * first 32 hex digits of the sha256 of the text the original hashes, so an
 * open merge request of either implementation is recognised by the other.
 */
export function combinedContentHash(subscribers: readonly Subscriber[]): string {
  const sorted = [...subscribers].sort((a, b) =>
    compare(
      [a.targetFilePath, a.templateName, a.namespace.path],
      [b.targetFilePath, b.templateName, b.namespace.path],
    ),
  );
  const indent = ' '.repeat(12);
  let message = '';
  for (const s of sorted) {
    const hashes = [...s.desiredHashes]
      .sort((a, b) =>
        compare(
          [a.channel, a.parentSaas, a.targetConfigHash],
          [b.channel, b.parentSaas, b.targetConfigHash],
        ),
      )
      .map((h) => `(${pyRepr(h.channel)}, ${pyRepr(h.parentSaas)}, ${pyRepr(h.targetConfigHash)})`);
    message +=
      `\n${indent}target_file_path: ${s.targetFilePath}` +
      `\n${indent}namespace_file_path: ${s.namespace.path}` +
      `\n${indent}desired_ref: ${s.desiredRef}` +
      `\n${indent}desired_hashes: [${hashes.join(', ')}]` +
      `\n${indent}`;
  }
  return createHash('sha256').update(message, 'utf8').digest('hex').slice(0, CONTENT_HASH_LENGTH);
}
