/**
 * Loading many resource files on worker threads. A cold run of
 * openshift-resources reads tens of thousands of YAML files; on one thread
 * that is the largest part of its CPU, while the same thread also decodes the
 * list pages of every cluster. Here the files are loaded beside it, and the
 * calling thread only decodes the results.
 *
 * The result is what `parseResource` gives on the calling thread (the loaded
 * mapping without `$schema`), with its sha, or nothing: the workers hand back
 * only mappings made of JSON data (strings,
 * finite numbers, booleans, null, lists, dicts with string keys), which cross
 * as JSON without losing anything. Every other document (Python floats such as
 * `1.0`, non-string keys, dates, anchors and aliases, tuples, errors) is left
 * to the caller, who loads it itself, so values and error messages are exactly
 * those of `parseResource`. A worker that fails or runs out of memory leaves
 * its files to the caller too.
 *
 * Runs from the sources (Node strips the types) and from the bundle, where
 * this module is imported dynamically and is therefore a chunk of its own:
 * the worker loads this module's file (`import.meta.url`), never a command's
 * entry.
 */
import { availableParallelism } from 'node:os';
import {
  isMainThread,
  parentPort,
  type ResourceLimits,
  Worker,
  workerData,
} from 'node:worker_threads';
import { OpenshiftResource } from './openshift-resource.ts';
import { pyYamlSafeLoad, resourceFromLoaded } from './parse-resource.ts';
import { bodiesWithSharedNodes, type PyObject, pyOrderedDicts, pyTuples } from './py-values.ts';

const TASK = 'qontract-openshift:loadResourceFiles';

/** Files per message: small enough to interleave with the caller's other work. */
const BATCH_SIZE = 250;

/**
 * A worker's heap: it decodes one batch of files at a time. Beyond it the
 * worker stops and its files go back to the caller.
 */
const WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 };

/** Below this many files a worker's start-up costs more than it saves. */
export const MIN_FILES_FOR_WORKERS = 2000;

/** Worker threads for loading when nobody says how many: the cores beside the caller's, at most 4. */
export function defaultLoadThreads(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

export interface LoadedTexts {
  /**
   * `text` as a worker loaded it, once its batch is done; undefined when the
   * caller loads it itself (not sent, or left by the workers).
   */
  get(text: string): Promise<LoadedResource | undefined>;
  /** Files the workers loaded, and files they left to the caller (so far). */
  readonly counts: { readonly loaded: number; readonly left: number };
  /** Stops the workers; texts not loaded yet are the caller's. */
  close(): void;
}

export interface LoadedResource {
  /**
   * What `parseResource(text)` gives, decoded when asked (a build the desired
   * cache answers never asks), a new copy on every call: the same file may be
   * built into several objects.
   */
  body(): PyObject;
  /** `OpenshiftResource.sha256sum()` of the body as loaded. */
  readonly sha256sum: string;
}

interface Batch {
  readonly id: number;
  readonly texts: readonly string[];
  readonly done: Promise<void>;
  resolve(): void;
  finished: boolean;
}

/** A batch loaded: each file's body as JSON and its sha, `null` where the caller must load it. */
type Reply = {
  readonly id: number;
  readonly values: readonly (readonly [string, string] | null)[];
};

/** Loads `texts` (duplicates once) on `threads` worker threads; nothing is started for none. */
export function loadInWorkers(
  texts: Iterable<string>,
  threads: number,
  options: { resourceLimits?: ResourceLimits } = {},
): LoadedTexts {
  const unique = [...new Set(texts)];
  const batches: Batch[] = [];
  const batchOf = new Map<string, Batch>();
  for (let start = 0; start < unique.length; start += BATCH_SIZE) {
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const batch: Batch = {
      id: batches.length,
      texts: unique.slice(start, start + BATCH_SIZE),
      done,
      resolve,
      finished: false,
    };
    batches.push(batch);
    for (const text of batch.texts) batchOf.set(text, batch);
  }
  /** Each loaded file's body as JSON (a copy is decoded for every object built from it), and its sha. */
  const values = new Map<string, readonly [string, string]>();
  const counts = { loaded: 0, left: 0 };
  const workers = new Set<Worker>();

  const finish = (batch: Batch, left: number): void => {
    if (batch.finished) return;
    batch.finished = true;
    counts.left += left;
    batch.resolve();
  };
  /** Stops every worker; what is not loaded yet is the caller's. */
  const leaveAll = (): void => {
    for (const w of workers) void w.terminate();
    workers.clear();
    for (const batch of batches) finish(batch, batch.texts.length);
  };

  const count = Math.min(Math.max(0, Math.floor(threads)), batches.length);
  for (let i = 0; i < count; i++) {
    // Every batch is sent at once (each worker's share, in order): a worker
    // never waits for the calling thread, which is busy with the lists.
    const share = batches.filter((b) => b.id % count === i);
    let pending = share.length;
    let worker: Worker;
    try {
      worker = new Worker(new URL(import.meta.url), {
        workerData: { task: TASK },
        resourceLimits: options.resourceLimits ?? WORKER_RESOURCE_LIMITS,
        // Nothing of the caller's environment is needed (the files are the whole input).
        env: {},
      });
    } catch {
      for (const batch of share) finish(batch, batch.texts.length);
      continue;
    }
    // Not unref'd: a caller may wait for nothing but these files.
    workers.add(worker);
    worker.on('message', (reply: Reply) => {
      const batch = batches[reply.id];
      if (!batch || batch.finished) return;
      let left = 0;
      batch.texts.forEach((text, i) => {
        const value = reply.values[i];
        if (value) values.set(text, value);
        else left++;
      });
      counts.loaded += batch.texts.length - left;
      finish(batch, left);
      if (--pending === 0) {
        workers.delete(worker);
        void worker.terminate();
      }
    });
    // A worker that fails (out of memory, a crash) leaves its files to the caller.
    const lost = (): void => {
      workers.delete(worker);
      for (const batch of share) finish(batch, batch.texts.length);
    };
    worker.once('error', lost);
    worker.once('exit', lost);
    for (const batch of share) worker.postMessage({ id: batch.id, texts: batch.texts });
  }
  if (workers.size === 0) leaveAll();

  return {
    get: async (text) => {
      const batch = batchOf.get(text);
      if (!batch) return undefined;
      await batch.done;
      const value = values.get(text);
      if (value === undefined) return undefined;
      const [json, sha256sum] = value;
      return { body: () => JSON.parse(json) as PyObject, sha256sum };
    },
    counts,
    close: () => {
      leaveAll();
      values.clear();
      batchOf.clear();
    },
  };
}

/**
 * Whether a loaded value crosses as JSON unchanged: JSON data only, no
 * Python-only value (those are classes), no list that stands for a tuple, no
 * ordered dict, no `__proto__` key. The caller loads anything else itself.
 */
function portable(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) return !pyTuples.has(value) && value.every(portable);
      if (Object.getPrototypeOf(value) !== Object.prototype || pyOrderedDicts.has(value)) {
        return false;
      }
      for (const key of Object.keys(value)) {
        if (key === '__proto__' || !portable((value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** The worker's side: each file's resource body as JSON and its sha, `null` where the caller must load it. */
function loadBatch(texts: readonly string[]): (readonly [string, string] | null)[] {
  return texts.map((text) => {
    try {
      const value = pyYamlSafeLoad(text);
      if (
        value === null ||
        typeof value !== 'object' ||
        Array.isArray(value) ||
        bodiesWithSharedNodes.has(value) ||
        !portable(value)
      ) {
        return null;
      }
      const body = resourceFromLoaded(value);
      const sha = new OpenshiftResource(body, '', '', { validate: false }).sha256sum();
      return [JSON.stringify(body), sha] as const;
    } catch {
      // The caller loads it again and reports what is wrong with it.
      return null;
    }
  });
}

if (!isMainThread && parentPort && (workerData as { task?: string } | null)?.task === TASK) {
  const port = parentPort;
  port.on('message', ({ id, texts }: { id: number; texts: string[] }) => {
    port.postMessage({ id, values: loadBatch(texts) } satisfies Reply);
  });
}
