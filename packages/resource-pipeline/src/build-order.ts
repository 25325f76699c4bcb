import { describeResource, type OpenshiftResourceData, type SelectedNamespace } from './model.ts';

const collator = new Intl.Collator();

export type BuildItem = readonly [SelectedNamespace, OpenshiftResourceData];

/** Where a loop keeps the order of its last run's build items, with the objects it was computed for. */
export interface OrderMemo {
  last?: {
    readonly namespaces: readonly unknown[];
    readonly resources: readonly unknown[];
    readonly order: Uint32Array;
  };
}

/**
 * The build items' indices by cluster, namespace and source, as the
 * collator orders them (as localeCompare does); equal keys by position. A
 * run over the same answer (loop mode, unchanged bundle) has the same item
 * objects and reuses the last order: sorting 50,000 keys with the collator
 * takes about 0.1-0.2 s.
 */
export function buildOrder(items: readonly BuildItem[], memo: OrderMemo | undefined): Uint32Array {
  const last = memo?.last;
  if (
    last &&
    last.resources.length === items.length &&
    items.every(([sel, r], i) => last.resources[i] === r && last.namespaces[i] === sel.namespace)
  ) {
    return last.order;
  }
  const keys = items.map(
    ([sel, r]) => `${sel.namespace.cluster.name}/${sel.namespace.name}/${describeResource(r)}`,
  );
  const order = Uint32Array.from(keys.keys()).sort(
    (a, b) => collator.compare(keys[a]!, keys[b]!) || a - b,
  );
  if (memo) {
    memo.last = {
      namespaces: items.map(([sel]) => sel.namespace),
      resources: items.map(([, r]) => r),
      order,
    };
  }
  return order;
}
