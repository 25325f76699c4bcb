import { hash } from 'node:crypto';
import { deepFreeze, RunGenerations } from '@qontract/core';
import {
  OpenshiftResource,
  type OpenshiftResourceOptions,
  type PyValue,
  pyDeepCopy,
} from '@qontract/openshift';

/**
 * What the pipeline keeps between the runs of one process (`run-integration`
 * loops over the same app-interface every few minutes): the desired objects
 * built from resource files and rendered templates, by content, so that an
 * unchanged file is not parsed, validated or hashed again, and a changed one
 * costs only its own work.
 *
 * Never stale by construction: an object is found only by everything it is
 * built from (the file's content, its path, the provider's flags, the
 * integration); a template's output only by its content, variables and
 * namespace, and only after every lookup it made (Vault, files, queries, URLs)
 * answered the same again. Bounded: a run keeps only the entries it used, the
 * others are dropped when it ends (runs that overlap, such as the shards of
 * one process, keep what any of them used, once the last of them ends).
 */
export class DesiredCache {
  readonly #objects: Objects = new Map();
  #templates = new Map<string, TemplateEntry>();
  /**
   * Short names of the variants (the inputs of a build besides its content
   * and path) by their full text: a handful per loop, while the objects keep
   * one variant each (50,000 full texts of the whole list were 7 MiB). Kept
   * with the objects whose keys they name, so they go with the loop.
   */
  readonly #variants = new Map<string, string>();
  /** Runs begun and not ended (shards of one process may overlap). */
  readonly #runs = new RunGenerations();

  /** The view of one run: what it looks up, and what it leaves behind. */
  beginRun(): DesiredCacheRun {
    const run = this.#runs.begin();
    return new DesiredCacheRun(this.#objects, this.#templates, this.#variants, run, (templates) => {
      this.#templates = templates;
      // Overlapping runs evict together, once the last of them ends.
      this.#runs.end(run, (epoch) => evictUnused(this.#objects, epoch));
    });
  }

  /** Whether an earlier run built an object from `content` (with any other input). */
  knows(content: string): boolean {
    return this.#objects.has(content);
  }

  /** Entries kept (objects, templates, variant names): for tests and the benchmark's memory checks. */
  get size(): { objects: number; templates: number; variants: number } {
    let objects = 0;
    for (const kept of this.#objects.values()) objects += kept instanceof Map ? kept.size : 1;
    return { objects, templates: this.#templates.size, variants: this.#variants.size };
  }
}

/**
 * Entries by the file content they are built from, then by the rest of their
 * input (the variant). The content string itself is the key: when the bundle
 * is unchanged it is the same string as in the previous run (V8 keeps its
 * hash), so a lookup neither hashes nor compares the content. Nearly every
 * content has one variant: its entry is kept directly, a map of variants only
 * when there are several (50,000 one-entry maps took about 5 MiB). One map
 * for all runs: each entry says which run used it last, and the entries no
 * run since the last eviction used are dropped when the runs end (a map
 * built afresh per run cost a warm run of 50,000 objects about 0.1 s).
 */
type Objects = Map<string, ObjectEntry | Map<string, ObjectEntry>>;

function lookup(objects: Objects, content: string, variant: string): ObjectEntry | undefined {
  const kept = objects.get(content);
  if (kept instanceof Map) return kept.get(variant);
  return kept?.variant === variant ? kept : undefined;
}

function keep(objects: Objects, content: string, entry: ObjectEntry): void {
  const kept = objects.get(content);
  if (kept === undefined || (!(kept instanceof Map) && kept.variant === entry.variant)) {
    objects.set(content, entry);
  } else if (kept instanceof Map) {
    kept.set(entry.variant, entry);
  } else {
    objects.set(
      content,
      new Map([
        [kept.variant, kept],
        [entry.variant, entry],
      ]),
    );
  }
}

/** Drops the entries last used before run `epoch`. */
function evictUnused(objects: Objects, epoch: number): void {
  for (const [content, kept] of objects) {
    if (!(kept instanceof Map)) {
      if (kept.usedIn < epoch) objects.delete(content);
      continue;
    }
    for (const [variant, entry] of kept) if (entry.usedIn < epoch) kept.delete(variant);
    if (kept.size === 0) objects.delete(content);
  }
}

/** A parsed, validated body: frozen, so nothing can change what later runs get. */
interface ObjectEntry {
  /** The input besides the content it was built from. */
  readonly variant: string;
  readonly body: PyValue;
  readonly integration: string;
  readonly integrationVersion: string;
  readonly errorDetails: string;
  /** `qontract.sha256sum` of the body, once some run asked for it. */
  sha?: string;
  /** The last run that used it. */
  usedIn: number;
}

/** What a build made: the object, and its body's `qontract.sha256sum` when it is known already. */
export interface BuiltObject {
  readonly resource: OpenshiftResource;
  readonly sha256sum?: string | undefined;
}

/** A template lookup (`vault`, `resource`, `graphql`, `github`, `url`, `s3`, `s3Ls`) and its answer. */
export interface HelperCall {
  readonly helper: string;
  readonly args: readonly unknown[];
  /** sha256 of the answer's JSON (the answer may be a secret: it is not kept). */
  readonly answer: string;
}

interface TemplateEntry {
  readonly rendered: string;
  readonly calls: readonly HelperCall[];
  /** The bundle the `resource` and `graphql` answers came from. */
  readonly bundleSha: string | undefined;
}

/** Helpers whose answers come from the bundle: equal bundle sha, equal answer. */
const BUNDLE_HELPERS: ReadonlySet<string> = new Set(['resource', 'graphql']);

export class DesiredCacheRun {
  readonly #objects: Objects;
  readonly #run: number;
  readonly #previousTemplates: ReadonlyMap<string, TemplateEntry>;
  readonly #templates = new Map<string, TemplateEntry>();
  readonly #variants: Map<string, string>;
  readonly #commit: (templates: Map<string, TemplateEntry>) => void;
  readonly hits = { objects: 0, templates: 0 };
  readonly misses = { objects: 0, templates: 0 };

  constructor(
    objects: Objects,
    templates: ReadonlyMap<string, TemplateEntry>,
    variants: Map<string, string>,
    run: number,
    commit: (templates: Map<string, TemplateEntry>) => void,
  ) {
    this.#objects = objects;
    this.#previousTemplates = templates;
    this.#variants = variants;
    this.#run = run;
    this.#commit = commit;
  }

  /**
   * A short stand-in for `parts`, the inputs of a build other than its content
   * and path, to begin the `variant` of `object` with: the same for equal
   * parts for as long as the cache lives.
   */
  variantPrefix(parts: readonly unknown[]): string {
    const full = JSON.stringify(parts);
    let prefix = this.#variants.get(full);
    if (prefix === undefined) {
      prefix = `${this.#variants.size}\u0000`;
      this.#variants.set(full, prefix);
    }
    return prefix;
  }

  /**
   * The object built from `content` and `variant` (together the full input of
   * `build`): the cached body, else `build()`'s, which is then kept. Bodies of
   * callers that change them (`mutable`: routes) go out as copies; the others
   * are shared and frozen (the engine copies a workload's body before it adds
   * the cluster's restart annotations to it).
   */
  object(
    content: string,
    variant: string,
    build: () => BuiltObject,
    options: { mutable: boolean },
  ): OpenshiftResource {
    let entry = lookup(this.#objects, content, variant);
    if (entry) {
      this.hits.objects++;
      entry.usedIn = Math.max(entry.usedIn, this.#run);
    } else {
      this.misses.objects++;
      const { resource: built, sha256sum } = build();
      entry = {
        variant,
        body: deepFreeze(built.body),
        integration: built.integration,
        integrationVersion: built.integrationVersion,
        errorDetails: built.errorDetails,
        ...(sha256sum === undefined ? {} : { sha: sha256sum }),
        usedIn: this.#run,
      };
      keep(this.#objects, content, entry);
    }
    return handOut(entry, options.mutable);
  }

  /**
   * The rendered text of a template, if a previous run rendered the same
   * input and every lookup it made answers the same now (`replay` asks again;
   * bundle lookups are not asked again when the bundle is the same).
   */
  async rendered(
    key: string,
    bundleSha: string | undefined,
    replay: (call: HelperCall) => Promise<string>,
  ): Promise<string | undefined> {
    const entry = this.#templates.get(key) ?? this.#previousTemplates.get(key);
    if (!entry) {
      this.misses.templates++;
      return undefined;
    }
    for (const call of entry.calls) {
      const sameBundle = bundleSha !== undefined && entry.bundleSha === bundleSha;
      if (BUNDLE_HELPERS.has(call.helper) && sameBundle) continue;
      let answer: string;
      try {
        answer = await replay(call);
      } catch {
        this.misses.templates++;
        return undefined;
      }
      if (answer !== call.answer) {
        this.misses.templates++;
        return undefined;
      }
    }
    this.hits.templates++;
    this.#templates.set(key, { ...entry, bundleSha });
    return entry.rendered;
  }

  /** Keeps a template's output and the lookups it made (not called when it read the clock). */
  keepRendered(
    key: string,
    rendered: string,
    calls: readonly HelperCall[],
    bundleSha: string | undefined,
  ): void {
    this.#templates.set(key, { rendered, calls, bundleSha });
  }

  /** Ends the run: only what it (and the runs beside it) used stays for the next one. */
  end(): void {
    this.#commit(this.#templates);
  }
}

function handOut(entry: ObjectEntry, mutable: boolean): OpenshiftResource {
  const options = { errorDetails: entry.errorDetails, validate: false } as const;
  if (mutable) {
    return new OpenshiftResource(
      pyDeepCopy(entry.body),
      entry.integration,
      entry.integrationVersion,
      options,
    );
  }
  return new CachedShaResource(entry, options);
}

/**
 * A cached body, shared and frozen, whose sha256sum comes from the cache while
 * the resource still holds that body. The engine never changes a desired body:
 * where it copies the pod template's restart annotations from the cluster into
 * a workload (`withRecycleAnnotations`), it plans with a new resource whose
 * sha is computed afresh.
 */
class CachedShaResource extends OpenshiftResource {
  readonly #entry: ObjectEntry;

  constructor(entry: ObjectEntry, options: OpenshiftResourceOptions) {
    super(entry.body, entry.integration, entry.integrationVersion, options);
    this.#entry = entry;
  }

  override sha256sum(): string {
    if (this.body !== this.#entry.body) return super.sha256sum();
    this.#entry.sha ??= super.sha256sum();
    return this.#entry.sha;
  }
}

/** A cache key from the parts of an input (sha256: long inputs are not kept as keys). */
export function cacheKey(...parts: readonly string[]): string {
  return hash('sha256', parts.join('\u0000'), 'base64');
}

/** The answer of a helper call as the cache compares it. */
export function answerDigest(answer: unknown): string {
  return hash('sha256', JSON.stringify(answer) ?? 'undefined', 'base64');
}
