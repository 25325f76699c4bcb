/**
 * The SLO gate of the CD family (the original's `SLODocumentManager`,
 * `reconcile/utils/slo_document_manager.py`): the current value of every SLO
 * of a target's SLO documents, read from Prometheus, and which of them are
 * breached. The configs trigger and saas-auto-promotions-manager hold a
 * target back while one of its SLOs is breached.
 */
import { errorMessage, QontractError, type RunContext } from '@qontract/core';
import { renderTemplate } from '@qontract/templating';
import PQueue from 'p-queue';
import {
  type InstantQueryData,
  type PrometheusAuth,
  PrometheusClient,
  PrometheusConnectionError,
} from './prometheus.ts';
import type { SaasSloDocumentFragment } from './saas-files.generated.ts';

/** An SLO document as a target's `slos` lists it. */
export type SloDocument = SaasSloDocumentFragment;
type SloNamespace = SloDocument['namespaces'][number];
type Slo = NonNullable<SloDocument['slos']>[number];

/** The current value of one SLO of a document, in one of its namespaces. */
export interface SloDetails {
  readonly documentName: string;
  readonly namespaceName: string;
  readonly clusterName: string;
  readonly serviceName: string;
  readonly slo: Slo;
  readonly currentValue: number;
}

/** An SLO value could not be read: the original's `RuntimeError`, nothing may pass the gate. */
export class SloRetrievalError extends QontractError {}

/** The breached SLOs of SLO documents, read with the run's credentials. */
export interface SloChecker {
  /**
   * Every SLO of every namespace of `documents` whose current value is below
   * its `SLOTarget`. Throws when Prometheus cannot be reached, and
   * SloRetrievalError when any value could not be read (an error answer, an
   * empty result, NaN): the gate fails closed, as the original's.
   */
  breachedSlos(documents: readonly SloDocument[]): Promise<SloDetails[]>;
}

/** The original's `SLOKey`: (document, namespace, cluster). */
function sloKey(document: string, namespace: string, cluster: string): string {
  return JSON.stringify([document, namespace, cluster]);
}

/**
 * The keys of a target's SLO documents in the target's own namespace (the
 * original's `TriggerSpecConfig.extract_slo_keys`).
 */
export function targetSloKeys(
  documents: readonly SloDocument[],
  namespaceName: string,
  clusterName: string,
): string[] {
  return documents.flatMap((d) =>
    d.namespaces
      .filter((n) => n.namespace.name === namespaceName && n.namespace.cluster.name === clusterName)
      .map((n) => sloKey(d.name, n.namespace.name, n.namespace.cluster.name)),
  );
}

/** Breached SLOs by their key (the original's `make_breached_slos_map`). */
export function breachedSlosByKey(breached: readonly SloDetails[]): Map<string, SloDetails[]> {
  const map = new Map<string, SloDetails[]>();
  for (const b of breached) {
    const key = sloKey(b.documentName, b.namespaceName, b.clusterName);
    map.set(key, [...(map.get(key) ?? []), b]);
  }
  return map;
}

/** Whether a value misses its target: strictly below it, whatever `SLOTargetUnit` says (as the original). */
function isBreached(currentValue: number, sloTarget: number): boolean {
  return currentValue < sloTarget;
}

/** Go's float text as Prometheus writes it, read as Python's `float()` does. */
function sampleValue(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return text.trim() === '' ? Number.NaN : Number(text);
}

/**
 * The SLO value of an instant query's answer: the first sample of a vector
 * (as the original), or a scalar; an empty vector or NaN is an error.
 */
export function currentSloValue(data: InstantQueryData): number {
  let text: string;
  if (data.resultType === 'vector') {
    const first = data.result[0];
    if (!first) throw new Error('prometheus returned empty result');
    text = first.value[1];
  } else if (data.resultType === 'scalar') {
    text = data.result[1];
  } else {
    throw new Error(`prometheus returned a ${data.resultType}, not an instant vector`);
  }
  const value = sampleValue(text);
  if (Number.isNaN(value)) throw new Error('slo value should be a number');
  return value;
}

/** The server an SLO namespace is read from (`get_host_url`). */
function hostUrl(ns: SloNamespace): string {
  return ns.prometheusAccess ? ns.prometheusAccess.url : ns.namespace.cluster.prometheusUrl;
}

async function authFor(ctx: RunContext, ns: SloNamespace): Promise<PrometheusAuth> {
  const access = ns.prometheusAccess;
  if (access) {
    if (!(access.username && access.password)) return null;
    const [username, password] = await Promise.all([
      ctx.secrets.read(access.username),
      ctx.secrets.read(access.password),
    ]);
    // The header carries them base64-encoded together: keep that form out of logs too.
    ctx.redactor.add(Buffer.from(`${username}:${password}`).toString('base64'));
    return { username, password };
  }
  const cluster = ns.namespace.cluster;
  if (!cluster.automationToken) {
    throw new QontractError(`cluster ${cluster.name} does not have automation token set`);
  }
  return { bearerToken: await ctx.secrets.read(cluster.automationToken) };
}

/**
 * The run's SLO checker: one Prometheus client per server URL (the first
 * namespace naming a URL gives its credentials, as the original's client
 * map), every query of the run asked once, at most `concurrency` at a time.
 */
export function sloCheckerForRun(
  ctx: RunContext,
  options: { readonly concurrency: number; readonly timeoutMs?: number; readonly retries?: number },
): SloChecker {
  const clients = new Map<string, Promise<PrometheusClient>>();
  const values = new Map<string, Promise<number>>();
  const queue = new PQueue({ concurrency: Math.max(1, options.concurrency) });

  const clientFor = (ns: SloNamespace) => {
    const url = hostUrl(ns);
    let client = clients.get(url);
    if (!client) {
      client = authFor(ctx, ns).then(
        (auth) =>
          new PrometheusClient({
            url,
            auth,
            signal: ctx.signal,
            ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
            ...(options.retries !== undefined ? { retries: options.retries } : {}),
          }),
      );
      clients.set(url, client);
    }
    return client;
  };

  /** The value of one SLO in one namespace; undefined when it could not be read (logged). */
  const readSlo = async (
    document: string,
    ns: SloNamespace,
    slo: Slo,
  ): Promise<SloDetails | undefined> => {
    const query = await renderTemplate(slo.expr, {
      type: 'jinja2',
      path: `SLO document ${document}: SLO ${slo.name}: expr`,
      variables: { window: slo.SLOParameters.window },
      helpers: {},
    });
    const where = `SLO: ${slo.name} of document: ${document} for namespace: ${ns.namespace.name}`;
    const key = `${hostUrl(ns)}\n${query}`;
    let value = values.get(key);
    if (!value) {
      value = clientFor(ns).then((client) =>
        queue.add(async () => currentSloValue(await client.instantQuery(query))),
      );
      values.set(key, value);
    }
    try {
      return {
        documentName: document,
        namespaceName: ns.namespace.name,
        clusterName: ns.namespace.cluster.name,
        serviceName: ns.namespace.app.name,
        slo,
        currentValue: await value,
      };
    } catch (e) {
      if (e instanceof PrometheusConnectionError) {
        ctx.log.error(`Connection error  getting current value for ${where}`);
        throw new QontractError(`${where}: cannot reach Prometheus: ${e.message}`);
      }
      if (e instanceof QontractError) throw e;
      ctx.log.error(
        `Unexpected error getting current value for ${where} details: ${errorMessage(e)}`,
      );
      return undefined;
    }
  };

  return {
    async breachedSlos(documents) {
      // A document listed by several targets is read once.
      const unique = [...new Map(documents.map((d) => [d.name, d])).values()];
      const details = await Promise.all(
        unique.flatMap((d) =>
          d.namespaces.flatMap((ns) => (d.slos ?? []).map((slo) => readSlo(d.name, ns, slo))),
        ),
      );
      if (details.some((d) => d === undefined)) {
        throw new SloRetrievalError('slo validation failed due to retrival errors');
      }
      return (details as SloDetails[]).filter((d) => isBreached(d.currentValue, d.slo.SLOTarget));
    },
  };
}
