import type { RunContext } from '@qontract/core';
import type { LoadedTexts } from '@qontract/openshift/parse-pool';
import type { DesiredCache } from './desired-cache.ts';
import { fields, type SelectedNamespace } from './model.ts';

/** More threads than this only cost memory: each has a heap of its own. */
const MAX_LOAD_THREADS = 16;

/**
 * Starts loading the resource files no earlier run of this process built an
 * object from, on worker threads when there are many (a cold run of a large
 * app-interface) and the machine has cores to spare; `QONTRACT_PARSE_THREADS`
 * sets the number of threads (0: none). Templates are rendered, and their
 * output loaded, on the run's own thread.
 */
export async function loadResourceFiles(
  ctx: RunContext,
  selected: readonly SelectedNamespace[],
  /** The loop's desired cache: the files it has objects of are not loaded again. */
  cache: DesiredCache | undefined,
): Promise<LoadedTexts | undefined> {
  const given = ctx.loop.tuning.parseThreads;
  if (given === 0) return undefined;
  const texts = new Set<string>();
  for (const sel of selected) {
    for (const r of sel.openshiftResources) {
      const f = fields(r);
      const plain =
        f.provider === 'resource' ||
        (f.provider === 'prometheus-rule' && (f.type ?? 'resource') === 'resource');
      const content = f.path?.content;
      if (plain && content && !cache?.knows(content)) texts.add(content);
    }
  }
  if (texts.size === 0) return undefined;
  // Imported here: the pool's module is its workers' code too (a chunk of its own in the bundle).
  const pool = await import('@qontract/openshift/parse-pool');
  const threads =
    given !== undefined
      ? Math.min(Number(given), MAX_LOAD_THREADS)
      : texts.size >= pool.MIN_FILES_FOR_WORKERS
        ? pool.defaultLoadThreads()
        : 0;
  if (threads === 0) return undefined;
  ctx.log.debug(`loading ${texts.size} resource files on ${threads} worker thread(s)`);
  return pool.loadInWorkers(texts, threads);
}
