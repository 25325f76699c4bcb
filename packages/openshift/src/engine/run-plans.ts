import type { RegisteredError, RunContext } from '@qontract/core';
import { Gauge } from 'prom-client';
import { ResourceInventory } from '../inventory/index.ts';
import {
  type ClusterInput,
  type ClusterPlan,
  type ClusterPlanRules,
  planCluster,
} from './cluster-plan.ts';
import type { CurrentStateSpec, FetchedState } from './fetch.ts';
import { type PlanMemo, planMemoOf } from './plan-memo.ts';
import type { PlannedAction } from './plan-types.ts';
import type { DesiredResource, ReconcileSettings } from './reconcile.ts';

/**
 * The plans of one run, cluster by cluster, and what the run says of them:
 * each cluster planned once (`planCluster`, or the previous run's plan from
 * the memo), its entries in the run's inventory, its lines and errors said
 * once, in the inventory's order for what is said at the end.
 */
export class RunPlans {
  readonly inventory = new ResourceInventory();
  readonly #ctx: RunContext;
  readonly #settings: Omit<ReconcileSettings, 'desired'>;
  readonly #specsOf: Map<string, CurrentStateSpec[]>;
  readonly #read: Set<string>;
  readonly #rules: ClusterPlanRules;
  readonly #memo: { readonly memo: PlanMemo; readonly done: () => void } | undefined;
  readonly #plans = new Map<string, { input: ClusterInput; plan: ClusterPlan; said: boolean }>();
  #takenOver = 0;

  constructor(ctx: RunContext, settings: Omit<ReconcileSettings, 'desired'>) {
    this.#ctx = ctx;
    this.#settings = settings;
    for (const spec of settings.specs) {
      this.inventory.initializeResourceType(
        spec.cluster,
        spec.namespace,
        spec.kind,
        spec.resourceNames,
      );
    }
    this.#specsOf = Map.groupBy(settings.specs, (spec) => spec.cluster);
    this.#read = new Set(settings.specs.map((spec) => `${spec.cluster}/${spec.namespace}`));
    this.#rules = {
      ...settings,
      renderDiff: Boolean(ctx.globals.diff || ctx.globals.planOut),
      // A dry-run compares anyway: it says what a compared run would change.
      skipCompare: Boolean(settings.skipCompare) && !ctx.dryRun,
    };
    this.#memo = planMemoOf(ctx, settings);
  }

  /** Whether the run reads the namespace (a spec names it). */
  reads(cluster: string, namespace: string): boolean {
    return this.#read.has(`${cluster}/${namespace}`);
  }

  /** Plans a cluster once its read has ended and its desired objects are in. */
  plan(
    cluster: string,
    states: readonly FetchedState[],
    desired: readonly DesiredResource[],
  ): void {
    const input: ClusterInput = {
      cluster,
      specs: this.#specsOf.get(cluster) ?? [],
      states,
      desired,
      hasClusterError: this.#ctx.errors.hasClusterError(cluster),
    };
    const kept = this.#memo?.memo.lookup(input);
    if (kept) this.#takenOver++;
    const plan = kept ?? planCluster(input, this.#rules);
    this.inventory.adoptCluster(cluster, plan.entries);
    this.#plans.set(cluster, { input, plan, said: false });
  }

  /** Says what planning the cluster found (its skip line, errors, left objects); its actions. */
  report(cluster: string): readonly PlannedAction[] {
    const entry = this.#plans.get(cluster)!;
    const { plan } = entry;
    if (!entry.said) {
      entry.said = true;
      const { log, errors } = this.#ctx;
      if (plan.skipped) log.error(`[${cluster}] skipping realize_data for cluster with errors`);
      for (const e of plan.errors) errors.register(e.scope, e.message);
      for (const line of plan.left) log.info(line);
    }
    return plan.actions;
  }

  /**
   * Once every desired object is in: plans the clusters that were not read
   * (their error skips them), says what is left to say in the inventory's
   * order, publishes the inventory and keeps the clean plans for the next run.
   */
  finish(desired: readonly DesiredResource[]): void {
    const { ctx, inventory } = { ctx: this.#ctx, inventory: this.inventory };
    const byCluster = Map.groupBy(desired, (d) => d.cluster);
    for (const cluster of byCluster.keys()) {
      if (!inventory.isClusterPresent(cluster))
        ctx.log.error(`Cluster ${cluster} not initialized in ResourceInventory`);
    }
    for (const cluster of inventory.clusters()) {
      if (!this.#plans.has(cluster)) this.plan(cluster, [], byCluster.get(cluster) ?? []);
      this.report(cluster);
    }
    if (this.#settings.warnUnusedTypes) {
      for (const cluster of inventory.clusters()) {
        for (const line of this.#plans.get(cluster)!.plan.unusedTypes) ctx.log.warn(line);
      }
    }
    publishInventoryMetrics(ctx, inventory, this.#settings.integration);
    if (this.#memo) {
      for (const { input, plan } of this.#plans.values()) {
        this.#memo.memo.save(input, plan, !concernsCluster(ctx.errors.errors, input.cluster));
      }
      this.#memo.done();
      ctx.log.debug(
        `clusters unchanged since the previous run: ${this.#takenOver} of ${this.#plans.size} (their objects not compared again)`,
      );
    }
  }

  /** Every action planned, in the inventory's order. */
  actions(): PlannedAction[] {
    return this.inventory.clusters().flatMap((c) => this.#plans.get(c)?.plan.actions ?? []);
  }
}

/** Whether an error of the run concerns `cluster` (its own or one of its namespaces'). */
function concernsCluster(errors: readonly RegisteredError[], cluster: string): boolean {
  const prefix = `${cluster}/`;
  return errors.some((e) => e.scope === cluster || e.scope.startsWith(prefix));
}

/** `qontract_reconcile_openshift_resource_inventory{integration, cluster, namespace, kind, state}`, as upstream. */
function publishInventoryMetrics(
  ctx: RunContext,
  inventory: ResourceInventory,
  integration: string,
): void {
  const registry = ctx.metrics.registry;
  const name = 'qontract_reconcile_openshift_resource_inventory';
  const gauge =
    (registry.getSingleMetric(name) as Gauge | undefined) ??
    new Gauge({
      name,
      help: 'Inventory of resources managed by an openshift integration',
      labelNames: ['integration', 'cluster', 'namespace', 'kind', 'state'],
      registers: [registry],
    });
  const label = integration.replaceAll('_', '-');
  // A gauge keeps its values: in a loop, a series whose count is the one the gauge was last given
  // is not set again (a loop's unchanged clusters: thousands of label sets hashed for nothing).
  const byGauge = ctx.loop.cache(
    'engine:inventory-counts',
    () => new WeakMap<Gauge, Map<string, number>>(),
  );
  const given = byGauge?.get(gauge) ?? new Map<string, number>();
  byGauge?.set(gauge, given);
  for (const row of inventory.counts()) {
    const key = `${label}\u0000${row.cluster}\u0000${row.namespace}\u0000${row.kind}\u0000${row.state}`;
    if (given.get(key) === row.count) continue;
    given.set(key, row.count);
    gauge.set(
      {
        integration: label,
        cluster: row.cluster,
        namespace: row.namespace,
        kind: row.kind,
        state: row.state,
      },
      row.count,
    );
  }
}
