import { hash } from 'node:crypto';
import { deepFreeze, RunGenerations } from '@qontract/core';
import type { KubeObject } from './kube-client.ts';

/**
 * Reading list pages, and keeping what the lists of one run returned for the
 * next run of the process.
 *
 * A page is split into its items without decoding it (`splitListBody`): each
 * item is decoded and parsed on its own, which is faster than decoding and
 * parsing the page as one text (most of that cost is the one large string),
 * and lets a looping process (run-integration) find the items whose bytes are
 * those of an item the previous run listed. Those are not decoded, parsed or
 * compacted again: the object made from the same bytes last time is handed
 * out (frozen). An API server sends the same bytes for an object as long as
 * it is unchanged (its `resourceVersion` is in them), so an object changed by
 * anyone between two runs is read afresh, and a run still compares every
 * object it listed.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
/** `items`, `metadata` and `namespace` as bytes. */
const ITEMS = Buffer.from('items');
const METADATA = Buffer.from('metadata');
const NAMESPACE = Buffer.from('namespace');

/** A list body split without decoding it. */
export interface SplitList {
  /** The body with the content of its `items` array left out: `…"items":[]…`. */
  readonly head: string;
  /** Start and end (exclusive) of each item, in order: `[start0, end0, start1, end1, …]`. */
  readonly ranges: readonly number[];
  /** Where the `items` array opens (`[`) and closes (`]`); -1 without one. */
  readonly itemsOpen: number;
  readonly itemsClose: number;
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Buffer, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/** `i` at a string's opening quote: the index after its closing quote, or -1. */
function stringEnd(b: Buffer, i: number): number {
  const n = b.length;
  for (i++; i < n; i++) {
    const c = b[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/**
 * `i` at an object or array: the index after its end, or -1 (brackets only,
 * no grammar). One pass over the bytes: a call per string (`indexOf`) costs
 * more than the bytes it skips, list items being mostly short strings.
 */
function compositeEnd(b: Buffer, i: number): number {
  let depth = 0;
  let inString = false;
  const n = b.length;
  for (; i < n; i++) {
    const c = b[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** `i` at a value: the index after it, or -1. */
function valueEnd(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return compositeEnd(b, i);
  const start = i;
  while (i < b.length) {
    const d = b[i]!;
    if (isSpace(d) || d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET) break;
    i++;
  }
  return i > start ? i : -1;
}

/** Whether the key string `[i, keyEnd)` (quotes included) is `name`, written without escapes. */
function keyIs(b: Buffer, i: number, keyEnd: number, name: Buffer): boolean {
  return keyEnd - i - 2 === name.length && b.compare(name, 0, name.length, i + 1, keyEnd - 1) === 0;
}

/**
 * The `metadata.namespace` of the object whose bytes are `[start, end)`, read
 * without decoding it: the first `namespace` key of the first `metadata` key,
 * found by reading the keys of those two objects and skipping the values of
 * the others. Undefined where the bytes do not say it plainly: a key written
 * with escapes (it could be `metadata` or `namespace` once parsed), a
 * namespace that is not a string without escapes, bytes that do not fit.
 * A key written twice (`JSON.parse` keeps the last) is not looked for: an API
 * server, whose encoders write each key once, does not send one.
 */
export function itemNamespace(b: Buffer, start: number, end: number): string | undefined {
  if (b[start] !== OPEN_BRACE) return undefined;
  // Whether the keys being read are the metadata's (else the item's own).
  let inMetadata = false;
  let i = skipSpace(b, start + 1);
  for (;;) {
    // Also where an object ends (`}`): the namespace was not found before.
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = plainStringEnd(b, i);
    if (keyEnd < 0 || keyEnd > end) return undefined;
    const wanted = keyIs(b, i, keyEnd, inMetadata ? NAMESPACE : METADATA);
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return undefined;
    i = skipSpace(b, i + 1);
    if (wanted && inMetadata) {
      if (b[i] !== QUOTE) return undefined;
      const next = plainStringEnd(b, i);
      return next < 0 || next > end ? undefined : b.toString('utf8', i + 1, next - 1);
    }
    if (wanted) {
      if (b[i] !== OPEN_BRACE) return undefined;
      inMetadata = true;
      i = skipSpace(b, i + 1);
      continue;
    }
    const next = valueEnd(b, i);
    if (next < 0 || next > end) return undefined;
    i = skipSpace(b, next);
    if (b[i] !== COMMA) return undefined;
    i = skipSpace(b, i + 1);
  }
}

/** `i` at a string's opening quote: the index after its closing quote, or -1 (also for a string with escapes). */
function plainStringEnd(b: Buffer, i: number): number {
  const n = b.length;
  for (i++; i < n; i++) {
    const c = b[i];
    if (c === BACKSLASH) return -1;
    if (c === QUOTE) return i + 1;
  }
  return -1;
}

/**
 * Splits a list response (`{"kind":…,"metadata":{…},"items":[{…},…]}`) into
 * the rest of the body and the byte ranges of its items, without decoding
 * it. Undefined for anything else (not an object, an item that is not an
 * object, a second `items` key, a key with escapes at the top level, bytes
 * that do not fit): the caller then parses the body as one text, which
 * gives the same values, or the same error.
 *
 * What is checked here and what is left to `JSON.parse`: the scan finds the
 * boundaries and checks the separators between the items and around the
 * top-level keys; the head and every item are parsed by `JSON.parse` (an
 * item found again by its bytes was parsed when it was first seen). So the
 * body is valid JSON exactly when every part parses, and the parts' values
 * are those of the whole.
 */
export function splitListBody(b: Buffer): SplitList | undefined {
  return scanList(b, false) as SplitList | undefined;
}

/**
 * Where the top-level `items` array of a list body opens (its `[`), the keys
 * before it checked as `splitListBody` checks them; -1 where the body is not
 * recognised that far. What follows is not looked at: a caller that finds
 * the bytes from there to the end to be those of a body split before knows
 * them to be as valid as they were.
 */
function itemsStart(b: Buffer): number {
  return scanList(b, true) as number;
}

function scanList(b: Buffer, stopAtItems: boolean): SplitList | number | undefined {
  const unknown = stopAtItems ? -1 : undefined;
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_BRACE) return unknown;
  i = skipSpace(b, i + 1);
  let itemsOpen = -1;
  let itemsClose = -1;
  const ranges: number[] = [];
  if (b[i] === CLOSE_BRACE)
    return stopAtItems ? -1 : finish(b, i + 1, itemsOpen, itemsClose, ranges);
  for (;;) {
    if (b[i] !== QUOTE) return unknown;
    const keyEnd = stringEnd(b, i);
    if (keyEnd < 0) return unknown;
    // A top-level key written with escapes could be `items` once parsed.
    if (b.subarray(i + 1, keyEnd - 1).includes(BACKSLASH)) return unknown;
    const isItems = keyIs(b, i, keyEnd, ITEMS);
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return unknown;
    i = skipSpace(b, i + 1);
    if (isItems && b[i] === OPEN_BRACKET) {
      if (itemsOpen >= 0) return unknown;
      if (stopAtItems) return i;
      itemsOpen = i;
      i = skipSpace(b, i + 1);
      if (b[i] !== CLOSE_BRACKET) {
        for (;;) {
          if (b[i] !== OPEN_BRACE) return unknown;
          const end = compositeEnd(b, i);
          if (end < 0) return unknown;
          ranges.push(i, end);
          i = skipSpace(b, end);
          if (b[i] === CLOSE_BRACKET) break;
          if (b[i] !== COMMA) return unknown;
          i = skipSpace(b, i + 1);
        }
      }
      itemsClose = i;
      i++;
    } else {
      if (isItems) return unknown; // items that are not an array: the whole body decides
      const end = valueEnd(b, i);
      if (end < 0) return unknown;
      i = end;
    }
    i = skipSpace(b, i);
    if (b[i] === CLOSE_BRACE)
      return stopAtItems ? -1 : finish(b, i + 1, itemsOpen, itemsClose, ranges);
    if (b[i] !== COMMA) return unknown;
    i = skipSpace(b, i + 1);
  }
}

function finish(
  b: Buffer,
  end: number,
  itemsOpen: number,
  itemsClose: number,
  ranges: number[],
): SplitList | undefined {
  if (skipSpace(b, end) !== b.length) return undefined;
  const head =
    itemsOpen < 0
      ? b.toString('utf8')
      : b.toString('utf8', 0, itemsOpen + 1) + b.toString('utf8', itemsClose);
  return { head, ranges, itemsOpen, itemsClose };
}

/** What a page of a list holds once read. */
export interface ListPage {
  readonly items: KubeObject[];
  readonly continue: string | undefined;
}

/** How a list's items are made and defaulted (see `KubeClient.list`). */
export interface ListItemSettings {
  /** `apiVersion` and `kind` of items that come without them (built-in kinds do). */
  readonly apiVersion: string;
  readonly kind: string;
  readonly each?: ((item: KubeObject) => KubeObject) | undefined;
  /**
   * Only the items of these namespaces (a cluster-wide list of a namespaced
   * kind for the namespaces a run manages): the others are not parsed or
   * made, where their bytes say their namespace plainly (`itemNamespace`),
   * and dropped once parsed where they do not.
   */
  readonly namespaces?: ReadonlySet<string> | undefined;
}

/**
 * Whether the item `[start, end)` may be of one of `namespaces`: false only
 * where its bytes say another namespace; the caller checks the parsed object
 * of the others.
 */
function mayBeWanted(
  b: Buffer,
  start: number,
  end: number,
  namespaces: ReadonlySet<string>,
): boolean {
  const namespace = itemNamespace(b, start, end);
  return namespace === undefined || namespaces.has(namespace);
}

/**
 * The part of a cache key that says which namespaces a cluster-wide list or
 * cache keeps: nothing for all of them; another set, even empty, is another key.
 */
export function namespacesKey(namespaces: ReadonlySet<string> | undefined): string[] {
  return namespaces ? ['namespaces', ...[...namespaces].sort()] : [];
}

function inNamespaces(item: KubeObject, namespaces: ReadonlySet<string> | undefined): boolean {
  return !namespaces || namespaces.has(item.metadata?.namespace ?? '');
}

const decoder = new TextDecoder();

/**
 * The items of one list page and its `continue` token. With `reuse`, items
 * whose bytes were listed in the previous run come back as the (frozen)
 * objects made of them then, and the others are made, frozen and kept. A
 * page whose items (the bytes from its `items` array to its end) are all
 * those of a page of the previous run costs one hash: its objects come back
 * without looking at them one by one.
 */
export function readListPage(
  body: Buffer,
  settings: ListItemSettings,
  reuse?: ListReuse,
): ListPage {
  try {
    let page: PageKey | undefined;
    if (reuse) {
      const open = itemsStart(body);
      if (open >= 0) {
        page = { open, digest: hash('sha256', body.subarray(open), 'base64') };
        const known = reuse.previousPage(page.digest);
        if (known) return fromKnownPage(body, page, known, reuse);
      }
    }
    const split = splitListBody(body);
    if (split) return fromSplit(body, split, settings, reuse, page);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    // A part that does not parse: the whole body gives the error it always gave.
  }
  // As undici's `text()`: UTF-8, a byte order mark dropped; an empty body is `{}`.
  const text = decoder.decode(body);
  const page = (text ? JSON.parse(text) : {}) as {
    items?: KubeObject[];
    metadata?: { continue?: string };
  };
  const items = page.items ?? [];
  return {
    items: (settings.namespaces
      ? items.filter((item) => inNamespaces(item, settings.namespaces))
      : items
    ).map((item) => madeObject(item, settings)),
    continue: page.metadata?.continue || undefined,
  };
}

/** Where a page's items begin, and the sha256 of its bytes from there to the end. */
interface PageKey {
  readonly open: number;
  readonly digest: string;
}

/** What a page of the previous run held, by the digest of its bytes from `items` on. */
interface KnownPage {
  readonly items: readonly KubeObject[];
  /** Their digests, so that the next run finds them one by one where the page changed. */
  readonly digests: readonly string[];
  /** Where the `items` array closes, counted from where it opens. */
  readonly close: number;
}

function fromKnownPage(body: Buffer, page: PageKey, known: KnownPage, reuse: ListReuse): ListPage {
  const head = JSON.parse(
    body.toString('utf8', 0, page.open + 1) + body.toString('utf8', page.open + known.close),
  ) as { metadata?: { continue?: string } };
  reuse.keepPage(page.digest, known);
  return { items: [...known.items], continue: head.metadata?.continue || undefined };
}

function fromSplit(
  body: Buffer,
  split: SplitList,
  settings: ListItemSettings,
  reuse: ListReuse | undefined,
  page: PageKey | undefined,
): ListPage {
  const head = JSON.parse(split.head) as { metadata?: { continue?: string } };
  const { ranges } = split;
  const { namespaces } = settings;
  const items: KubeObject[] = [];
  const digests: string[] = [];
  for (let r = 0; r < ranges.length; r += 2) {
    const start = ranges[r]!;
    const end = ranges[r + 1]!;
    if (namespaces && !mayBeWanted(body, start, end, namespaces)) continue;
    // Undefined for an item of another namespace, which the bytes did not tell.
    const parsed = () => {
      const item = JSON.parse(body.toString('utf8', start, end)) as KubeObject;
      return inNamespaces(item, namespaces) ? madeObject(item, settings) : undefined;
    };
    if (!reuse) {
      const item = parsed();
      if (item) items.push(item);
      continue;
    }
    const digest = hash('sha256', body.subarray(start, end), 'base64');
    let item = reuse.previous(digest);
    if (!item) {
      const fresh = parsed();
      if (!fresh) continue;
      item = deepFreeze(fresh);
    }
    reuse.keep(digest, item);
    items.push(item);
    digests.push(digest);
  }
  if (reuse && page && page.open === split.itemsOpen) {
    reuse.keepPage(page.digest, { items, digests, close: split.itemsClose - split.itemsOpen });
  }
  return { items, continue: head.metadata?.continue || undefined };
}

/**
 * The object of a single object's answer (a GET): the previous run's object
 * when `reuse` kept one made of the same bytes, else made (see `madeObject`)
 * and frozen. The caller commits `reuse`.
 */
export function readObject(body: Buffer, settings: ListItemSettings, reuse: ListReuse): KubeObject {
  const digest = hash('sha256', body, 'base64');
  const item =
    reuse.previous(digest) ??
    deepFreeze(madeObject(JSON.parse(decoder.decode(body)) as KubeObject, settings));
  reuse.keep(digest, item);
  return item;
}

/** A decoded object as the engine keeps it: `apiVersion` and `kind` filled in, then `each`. */
export function madeObject(item: KubeObject, settings: ListItemSettings): KubeObject {
  // List items of built-in kinds come without kind/apiVersion; the resource
  // model needs them, as `oc get -o json` provides them.
  item.apiVersion ??= settings.apiVersion;
  item.kind ??= settings.kind;
  return settings.each ? settings.each(item) : item;
}

/**
 * What one list (all its pages) finds of the previous run's list of the same
 * scope, and what it leaves for the next run: once the list is complete
 * (`commit`), its items replace the scope's; a list that fails half-way
 * leaves the scope as it was.
 */
export interface ListReuse {
  previous(digest: string): KubeObject | undefined;
  keep(digest: string, item: KubeObject): void;
  previousPage(digest: string): KnownPage | undefined;
  /** Keeps a page, and each of its items. */
  keepPage(digest: string, page: KnownPage): void;
  commit(): void;
}

interface Scope {
  /** The function that made the items (`each`): another one makes other objects. */
  readonly each: ListItemSettings['each'];
  objects: Map<string, KubeObject>;
  pages: Map<string, KnownPage>;
  usedIn: number;
}

/**
 * The objects the lists of a process's runs returned, by cluster and scope
 * (kind, namespace, selectors) and by the sha256 of their bytes, kept from
 * one run of a loop to the next (see the top of this file). Bounded: a scope
 * holds the items of its last complete list, and scopes that no run used
 * since the last drop are dropped once the runs under way have ended.
 */
export class ListedObjects {
  readonly #clusters = new Map<string, Map<string, Scope>>();
  readonly #runs = new RunGenerations();

  /** The view of one run; `end` it when the run ends. */
  beginRun(): ListedObjectsRun {
    const run = this.#runs.begin();
    const counts = { reused: 0, read: 0 };
    return {
      counts,
      forCluster: (cluster) => new ClusterListedObjects(this.#scopes(cluster), run, counts),
      end: () => this.#runs.end(run, (epoch) => this.#drop(epoch)),
    };
  }

  /** Objects kept, over every cluster and scope: for tests. */
  get size(): number {
    let n = 0;
    for (const scopes of this.#clusters.values())
      for (const scope of scopes.values()) n += scope.objects.size;
    return n;
  }

  #scopes(cluster: string): Map<string, Scope> {
    let scopes = this.#clusters.get(cluster);
    if (!scopes) {
      scopes = new Map();
      this.#clusters.set(cluster, scopes);
    }
    return scopes;
  }

  #drop(epoch: number): void {
    for (const [cluster, scopes] of this.#clusters) {
      for (const [key, scope] of scopes) if (scope.usedIn < epoch) scopes.delete(key);
      if (scopes.size === 0) this.#clusters.delete(cluster);
    }
  }
}

export interface ListedObjectsRun {
  /** Items of this run's lists found unchanged since the previous run, and items read afresh. */
  readonly counts: ListCounts;
  /** What one cluster's client (`cluster`: its connection, credential and server) reuses. */
  forCluster(cluster: string): ClusterListedObjects;
  end(): void;
}

interface ListCounts {
  reused: number;
  read: number;
}

/** One cluster's scopes, as a run's client of that cluster sees them. */
export class ClusterListedObjects {
  readonly #scopes: Map<string, Scope>;
  readonly #run: number;
  readonly #counts: ListCounts;

  constructor(scopes: Map<string, Scope>, run: number, counts: ListCounts) {
    this.#scopes = scopes;
    this.#run = run;
    this.#counts = counts;
  }

  /** The reuse of one list of `scope` whose items `each` makes. */
  list(scope: string, each: ListItemSettings['each']): ListReuse {
    const kept = this.#scopes.get(scope);
    const same = kept && kept.each === each ? kept : undefined;
    const previous = same?.objects;
    const previousPages = same?.pages;
    if (kept) kept.usedIn = Math.max(kept.usedIn, this.#run);
    const next = new Map<string, KubeObject>();
    const nextPages = new Map<string, KnownPage>();
    const counts = this.#counts;
    return {
      previous: (digest) => {
        const item = previous?.get(digest);
        if (item) counts.reused++;
        else counts.read++;
        return item;
      },
      keep: (digest, item) => {
        next.set(digest, item);
      },
      previousPage: (digest) => {
        const page = previousPages?.get(digest);
        if (page) counts.reused += page.items.length;
        return page;
      },
      keepPage: (digest, page) => {
        nextPages.set(digest, page);
        for (let i = 0; i < page.items.length; i++) next.set(page.digests[i]!, page.items[i]!);
      },
      commit: () => {
        this.#scopes.set(scope, { each, objects: next, pages: nextPages, usedIn: this.#run });
      },
    };
  }
}
