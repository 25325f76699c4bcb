import type { RunContext } from '@qontract/core';

/** The original's `oc` client methods that it times (`@process_reconcile_time`). */
type TimedWriteFunction = 'apply' | 'delete' | 'label' | 'new_project' | 'delete_project';

/** One write to a cluster, as the time since the bundle's commit is measured for it. */
export interface TimedWrite {
  readonly fn: TimedWriteFunction;
  readonly cluster: string;
  /** Empty for a cluster-scoped object that is not a namespace. */
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  /** The object says `qontract.ignore_reconcile_time: "true"`: logged, not observed. */
  readonly ignored?: boolean;
}

/**
 * The original's `qontract_reconcile_function_elapsed_seconds_since_bundle_commit`:
 * for each write, the time from the bundle's commit to the write, named after
 * the original's `oc` method (`reconcile.utils.oc.OCCli.apply`), unless the
 * object says `qontract.ignore_reconcile_time: "true"`. With
 * `LOG_SLOW_OC_RECONCILE=true` (or `yes`), a write later than
 * `SLOW_OC_RECONCILE_THRESHOLD` seconds (default 600) is logged at INFO, as the
 * original does; the line names the cluster where the original names its
 * server URL. Undefined in a dry-run (nothing is written) and when the commit
 * is unknown (the original would fail the run there).
 */
export async function reconcileTimeObserver(
  ctx: Pick<RunContext, 'dryRun' | 'globals' | 'env' | 'metrics' | 'log' | 'integration'>,
): Promise<((write: TimedWrite) => void) | undefined> {
  if (ctx.dryRun) return undefined;
  // Loaded here, not at start-up: the integrations calling this have loaded it already.
  const { bundleCommit } = await import('@qontract/app-interface');
  const commit = bundleCommit(ctx);
  if (commit === undefined) return undefined;
  const logSlow = ['true', 'yes'].includes(
    (ctx.env.vars.LOG_SLOW_OC_RECONCILE ?? '').toLowerCase(),
  );
  const threshold = Number(ctx.env.vars.SLOW_OC_RECONCILE_THRESHOLD ?? '600');
  return (write) => {
    const name = `reconcile.utils.oc.OCCli.${write.fn}`;
    const spent = Date.now() / 1000 - commit.time;
    if (!write.ignored) {
      ctx.metrics.reconcileTime.observe({ name, integration: ctx.integration }, spent);
    }
    if (!logSlow || !(spent > threshold)) return;
    ctx.log.info(
      `Action ${name} for ${write.kind} ${write.name} in namespace ${write.namespace} from ` +
        `${write.cluster} took ${spent} to reconcile. Commit sha ${commit.sha} and commit ts ` +
        `${commit.time}.${write.ignored ? ' Ignored in the metric published.' : ''}`,
    );
  };
}
