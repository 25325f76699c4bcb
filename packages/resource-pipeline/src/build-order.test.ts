import { describe, expect, it } from 'vitest';
import { type BuildItem, buildOrder, type OrderMemo } from './build-order.ts';
import { describeResource, type NamespaceData, type OpenshiftResourceData } from './model.ts';

const namespace = (cluster: string, name: string) =>
  ({ name, cluster: { name: cluster } }) as unknown as NamespaceData;
const file = (path: string) =>
  ({ provider: 'resource', path: { path, content: '' } }) as unknown as OpenshiftResourceData;
const items = (...entries: Array<[NamespaceData, OpenshiftResourceData]>): BuildItem[] =>
  entries.map(([ns, r]) => [{ namespace: ns, openshiftResources: [r] }, r] as const);
const keyOf = (list: BuildItem[], order: Uint32Array) =>
  [...order].map((i) => `${list[i]![0].namespace.name}${describeResource(list[i]![1])}`);

describe('the order of the desired objects', () => {
  const b = namespace('c1', 'b');
  const a = namespace('c1', 'a');
  const upper = namespace('c1', 'B');

  it('is by cluster, namespace and file as the collator orders them, equal keys by position', () => {
    const list = items(
      [b, file('/z.yml')],
      [upper, file('/a.yml')],
      [a, file('/y.yml')],
      [b, file('/z.yml')],
    );
    const order = buildOrder(list, undefined);
    // The collator's order of the whole key: case counts only where the letters are equal.
    expect(keyOf(list, order)).toEqual(['a/y.yml', 'B/a.yml', 'b/z.yml', 'b/z.yml']);
    expect([...order]).toEqual([2, 1, 0, 3]);
  });

  it('is computed once for the same items (a run over the same answer), afresh when one changed', () => {
    const x = file('/x.yml');
    const y = file('/y.yml');
    const first = items([b, x], [a, y]);
    const memo: OrderMemo = {};
    const order = buildOrder(first, memo);
    expect(buildOrder(items([b, x], [a, y]), memo)).toBe(order);
    // The same paths in new objects (a new answer): sorted again, to the same result.
    const renewed = items([b, file('/x.yml')], [a, file('/y.yml')]);
    const again = buildOrder(renewed, memo);
    expect(again).not.toBe(order);
    expect([...again]).toEqual([...order]);
    const moved = items([a, file('/x.yml')], [b, file('/y.yml')]);
    expect([...buildOrder(moved, memo)]).toEqual([0, 1]);
  });

  it('is not kept when the answer is not', () => {
    const list = items([b, file('/x.yml')]);
    const order = buildOrder(list, undefined);
    expect(buildOrder(list, undefined)).not.toBe(order);
  });
});
