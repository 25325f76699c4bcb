/**
 * The original's aggregated list (`reconcile/utils/aggregated_list.py`) for
 * the two kinds of GitHub items: params → members, members de-duplicated in
 * first-seen order, params compared by value (not by key order).
 */

/** An organisation's members, or a team's. */
export type GithubParams =
  | { readonly service: 'github-org'; readonly org: string }
  | { readonly service: 'github-org-team'; readonly org: string; readonly team: string };

export interface AggregatedItem {
  readonly params: GithubParams;
  readonly items: readonly string[];
}

export function orgParams(org: string): GithubParams {
  return { service: 'github-org', org };
}

export function teamParams(org: string, team: string): GithubParams {
  return { service: 'github-org-team', org, team };
}

function paramsKey(p: GithubParams): string {
  return JSON.stringify([p.service, p.org, p.service === 'github-org-team' ? p.team : null]);
}

/** Params → members, in first-added order. */
export class AggregatedList {
  readonly #items = new Map<string, { params: GithubParams; items: string[]; seen: Set<string> }>();

  add(params: GithubParams, members: Iterable<string>): void {
    const key = paramsKey(params);
    let entry = this.#items.get(key);
    if (!entry) {
      entry = { params, items: [], seen: new Set() };
      this.#items.set(key, entry);
    }
    for (const m of members) {
      if (entry.seen.has(m)) continue;
      entry.seen.add(m);
      entry.items.push(m);
    }
  }

  /** The original's `dump()`: `[{params, items}]` in insertion order. */
  dump(): AggregatedItem[] {
    return [...this.#items.values()].map(({ params, items }) => ({ params, items: [...items] }));
  }

  static of(items: readonly AggregatedItem[]): AggregatedList {
    const list = new AggregatedList();
    for (const { params, items: members } of items) list.add(params, members);
    return list;
  }

  /**
   * What changes from this (current) list to `desired`: params only desired
   * (`insert`), only current (`delete`), and for params on both sides the
   * members to add (`updateInsert`) and to remove (`updateDelete`). Orders as
   * upstream: inserts in desired order, the rest in current order.
   */
  diff(desired: AggregatedList): AggregatedDiff {
    const out: AggregatedDiff = { insert: [], delete: [], updateInsert: [], updateDelete: [] };
    for (const [key, right] of desired.#items) {
      if (!this.#items.has(key)) out.insert.push({ params: right.params, items: [...right.items] });
    }
    for (const [key, left] of this.#items) {
      const right = desired.#items.get(key);
      if (!right) {
        out.delete.push({ params: left.params, items: [...left.items] });
        continue;
      }
      const toAdd = right.items.filter((m) => !left.seen.has(m));
      const toRemove = left.items.filter((m) => !right.seen.has(m));
      if (toAdd.length > 0) out.updateInsert.push({ params: left.params, items: toAdd });
      if (toRemove.length > 0) out.updateDelete.push({ params: left.params, items: toRemove });
    }
    return out;
  }
}

export interface AggregatedDiff {
  readonly insert: AggregatedItem[];
  readonly delete: AggregatedItem[];
  readonly updateInsert: AggregatedItem[];
  readonly updateDelete: AggregatedItem[];
}
