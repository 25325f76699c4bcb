import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactObject } from './compact-object.ts';
import type { KubeObject } from './kube-client.ts';
import { itemNamespace, ListedObjects, readListPage, splitListBody } from './listed-objects.ts';

const settings = { apiVersion: 'v1', kind: 'ConfigMap' };

/** What the client did before pages were split: decode the whole body, parse it, default each item. */
function wholeBody(body: Buffer): { items: unknown[]; continue: string | undefined } {
  const text = new TextDecoder().decode(body);
  const page = (text ? JSON.parse(text) : {}) as {
    items?: Array<Record<string, unknown>>;
    metadata?: { continue?: string };
  };
  return {
    items: (page.items ?? []).map((item) => ({
      ...item,
      apiVersion: item.apiVersion ?? settings.apiVersion,
      kind: item.kind ?? settings.kind,
    })),
    continue: page.metadata?.continue || undefined,
  };
}

const listBody = (items: unknown[], extra: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { continue: 'c2' },
      ...extra,
      items,
    }),
  );

/** Strings that trip a scanner: quotes, backslashes, brackets, non-ASCII. */
const trickyString = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '"',
    '\\',
    '\\"',
    '"\\',
    '{',
    '}',
    '[',
    ']',
    '{"items":[',
    'é',
    '😀',
    '\u2028',
    '\\\\"',
  ),
  fc.string({ unit: fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', 'a', 'é', '😀') }),
  // Long strings of escapes and brackets.
  fc.string({
    unit: fc.constantFrom('"', '\\', '\\\\', 'a', 'é', '}', ']'),
    minLength: 50,
    maxLength: 120,
  }),
);
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    trickyString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const item = fc.record(
  {
    apiVersion: fc.constant('v1'),
    metadata: fc.record({ name: trickyString, namespace: fc.string() }),
    data: fc.dictionary(trickyString, jsonValue, { maxKeys: 5 }),
  },
  { requiredKeys: ['metadata'] },
);

/** Re-serialised with whitespace around every separator, as another encoder might write it. */
function spaced(value: unknown): string {
  return JSON.stringify(value, null, 1).replace(/\n/g, '\r\n\t ');
}

describe('splitListBody and readListPage', () => {
  it('give what decoding and parsing the whole body gave, for any list (property)', () => {
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 6 }),
        fc.boolean(),
        fc.boolean(),
        (items, pretty, itemsFirst) => {
          const page = itemsFirst
            ? { items, kind: 'ConfigMapList', metadata: { continue: 'next' } }
            : { kind: 'ConfigMapList', metadata: { continue: 'next' }, items };
          const body = Buffer.from(pretty ? spaced(page) : JSON.stringify(page));
          expect(splitListBody(body)?.ranges.length).toBe(items.length * 2);
          expect(readListPage(body, settings)).toEqual(wholeBody(body));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('splits out each item as its own bytes and keeps the rest', () => {
    const items = [
      { metadata: { name: 'a"]}' } },
      { metadata: { name: 'b\\' }, data: { x: '[{' } },
    ];
    const body = listBody(items);
    const split = splitListBody(body)!;
    expect(JSON.parse(split.head)).toEqual({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { continue: 'c2' },
      items: [],
    });
    const parts = [];
    for (let i = 0; i < split.ranges.length; i += 2)
      parts.push(JSON.parse(body.toString('utf8', split.ranges[i], split.ranges[i + 1])));
    expect(parts).toEqual(items);
  });

  it('leaves to the whole-body parse what it does not recognise, with the same values or error', () => {
    const odd = [
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), listBody([{ metadata: { name: 'bom' } }])]),
      Buffer.from('{"items":[{"metadata":{"name":"x"}}],"items":[]}'),
      Buffer.from('{"\\u0069tems":[{"metadata":{"name":"escaped key"}}]}'),
      Buffer.from('{"items":null,"metadata":{}}'),
      Buffer.from('{"metadata":{"continue":"x"}}'),
      Buffer.from(''),
      Buffer.from('  {}  '),
    ];
    for (const body of odd) expect(readListPage(body, settings)).toEqual(wholeBody(body));
    // Items that are not objects cannot take a kind, as before.
    expect(() => readListPage(Buffer.from('{"items":[1,2]}'), settings)).toThrow(TypeError);
    for (const broken of [
      '{"items":[{"metadata":{"name":"x"}} garbage]}',
      '{"items":[{"metadata":{"name":"x",}}]}',
      '{"items":[{"metadata":{"name":"x"}}]',
      '{"items":[{"metadata":{"name":"x"}}]} trailing',
      '{"items":[{"a":[}]}',
      'not json',
    ]) {
      const body = Buffer.from(broken);
      const expected = (() => {
        try {
          wholeBody(body);
        } catch (e) {
          return (e as Error).message;
        }
        return 'no error';
      })();
      expect(() => readListPage(body, settings), broken).toThrow(expected);
    }
  });

  it('maps each item with `each` after defaulting apiVersion and kind', () => {
    const body = listBody([
      { metadata: { name: 'a' } },
      { apiVersion: 'v2', kind: 'Other', metadata: {} },
    ]);
    const seen: KubeObject[] = [];
    const page = readListPage(body, {
      ...settings,
      each: (o) => {
        seen.push(o);
        return { ...o, mapped: true } as KubeObject;
      },
    });
    expect(seen.map((o) => [o.apiVersion, o.kind])).toEqual([
      ['v1', 'ConfigMap'],
      ['v2', 'Other'],
    ]);
    expect(page.items.every((o) => (o as { mapped?: boolean }).mapped)).toBe(true);
    expect(page.continue).toBe('c2');
  });
});

describe('a cluster-wide list for some namespaces', () => {
  const namespaceOf = (json: string) => {
    const b = Buffer.from(`  ${json}`);
    return itemNamespace(b, 2, b.length);
  };

  it('reads metadata.namespace from the bytes, wherever the keys stand', () => {
    const plain = '{"metadata":{"name":"a","namespace":"ns-1","uid":"u"},"data":{"namespace":"x"}}';
    expect(namespaceOf(plain)).toBe('ns-1');
    // Sorted keys, as an API server writes a custom resource: a label and
    // managedFields named like it come first, and nested values too.
    const sorted = JSON.stringify({
      apiVersion: 'x/v1',
      kind: 'K',
      data: { metadata: { namespace: 'not-this' } },
      metadata: {
        annotations: { namespace: 'nor-this' },
        labels: { namespace: 'nor-this' },
        managedFields: [{ fieldsV1: { 'f:metadata': { 'f:namespace': {} } } }],
        name: 'b',
        namespace: 'ns-2',
      },
      spec: { namespace: 'nor-that' },
    });
    expect(namespaceOf(sorted)).toBe('ns-2');
    expect(namespaceOf('{ "metadata" : { "namespace" : "ns-3" } }')).toBe('ns-3');
  });

  it('does not say where the bytes do not say it plainly', () => {
    for (const json of [
      '{"metadata":{"name":"a"}}',
      '{"metadata":{}}',
      '{"kind":"K"}',
      '{}',
      '{"metadata":{"namespace":null}}',
      '{"metadata":{"namespace":"n\\u0073"}}',
      '{"metadata":{"n\\u0061mespace":"ns"}}',
      '{"met\\u0061data":{"namespace":"ns"}}',
      '{"metadata":null}',
      '{"metadata":{"name":"a',
      '[]',
    ]) {
      expect(namespaceOf(json), json).toBeUndefined();
    }
  });

  it('gives the items of those namespaces that the whole body gave, and makes no other (property)', () => {
    const names = ['a', 'b', 'c'];
    const member = fc.oneof(
      fc.record({
        metadata: fc.record(
          {
            labels: fc.dictionary(fc.constantFrom('namespace', 'x'), fc.constantFrom(...names)),
            name: trickyString,
            namespace: fc.constantFrom(...names),
          },
          { requiredKeys: ['namespace'] },
        ),
        data: fc.dictionary(trickyString, jsonValue, { maxKeys: 3 }),
      }),
      item,
    );
    fc.assert(
      fc.property(
        fc.array(member, { maxLength: 8 }),
        fc.subarray(names),
        fc.constantFrom('compact', 'spaced', 'escaped'),
        (items, wanted, encoding) => {
          const page = { kind: 'ConfigMapList', metadata: { continue: 'next' }, items };
          const text = encoding === 'spaced' ? spaced(page) : JSON.stringify(page);
          // Another encoder may escape what it likes: the namespaces and `metadata` keys here.
          const body = Buffer.from(
            encoding === 'escaped'
              ? text
                  .replace(/"([abc])"/g, (_, c: string) => `"\\u006${c.charCodeAt(0) - 96}"`)
                  .replace(/"metadata":\{"name"/g, '"met\\u0061data":{"name"')
              : text,
          );
          const namespaces = new Set(wanted);
          const made: KubeObject[] = [];
          const read = readListPage(body, {
            ...settings,
            namespaces,
            each: (o) => {
              made.push(o);
              return o;
            },
          });
          const expected = wholeBody(body);
          const kept = expected.items.filter((o) =>
            namespaces.has((o as KubeObject).metadata?.namespace ?? ''),
          );
          expect(read).toEqual({ items: kept, continue: expected.continue });
          expect(made).toEqual(kept);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves the items of other namespaces out of what a loop keeps', () => {
    const store = new ListedObjects();
    const each = compactObject;
    const inNs = (name: string, namespace: string) => ({ metadata: { name, namespace } });
    const body = listBody([inNs('a', 'mine'), inNs('b', 'other'), inNs('c', 'mine')]);
    const read = () => {
      const run = store.beginRun();
      const reuse = run.forCluster('c1').list('s', each);
      const page = readListPage(body, { ...settings, each, namespaces: new Set(['mine']) }, reuse);
      reuse.commit();
      run.end();
      return { names: page.items.map((o) => o.metadata?.name), counts: run.counts };
    };
    expect(read()).toEqual({ names: ['a', 'c'], counts: { reused: 0, read: 2 } });
    expect(store.size).toBe(2);
    // The same page again: taken whole, still without the other namespace.
    expect(read()).toEqual({ names: ['a', 'c'], counts: { reused: 2, read: 0 } });
  });
});

describe('ListedObjects: what a loop keeps of its lists', () => {
  const each = compactObject;
  const object = (name: string, resourceVersion: string): KubeObject => ({
    metadata: {
      name,
      namespace: 'ns',
      resourceVersion,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
    },
    data: { k: name },
  });
  const list = (store: ListedObjects, pages: unknown[][], scope = 's', complete = true) => {
    const run = store.beginRun();
    const reuse = run.forCluster('c1').list(scope, each);
    const items = pages.flatMap(
      (p) => readListPage(listBody(p), { ...settings, each }, reuse).items,
    );
    if (complete) reuse.commit();
    run.end();
    return { items, counts: run.counts };
  };

  it('hands out the previous run’s object for unchanged bytes, frozen, and reads changed ones afresh', () => {
    const store = new ListedObjects();
    const first = list(store, [[object('a', '1'), object('b', '1')]]);
    expect(first.counts).toEqual({ reused: 0, read: 2 });
    expect(Object.isFrozen(first.items[0]!.metadata)).toBe(true);
    // Compacted as the engine keeps it: no last-applied copy.
    expect(first.items[0]!.metadata?.annotations).toEqual({});

    const second = list(store, [[object('a', '1'), object('b', '2')]]);
    expect(second.counts).toEqual({ reused: 1, read: 1 });
    expect(second.items[0]).toBe(first.items[0]);
    expect(second.items[1]).not.toBe(first.items[1]);
    expect(second.items[1]!.metadata?.resourceVersion).toBe('2');
  });

  it('takes an unchanged page whole, with its own continue token, and still finds items one by one later', () => {
    const store = new ListedObjects();
    const objects = [object('a', '1'), object('b', '1'), object('c', '1')];
    const inRun = (body: Buffer) => {
      const run = store.beginRun();
      const reuse = run.forCluster('c1').list('s', each);
      const page = readListPage(body, { ...settings, each }, reuse);
      reuse.commit();
      run.end();
      return { page, counts: run.counts };
    };
    const first = inRun(listBody(objects, { metadata: { continue: 'one', resourceVersion: '7' } }));
    // Another continue token and list version before the items: the same page.
    const second = inRun(
      listBody(objects, { metadata: { continue: 'two', resourceVersion: '9' } }),
    );
    expect(second.counts).toEqual({ reused: 3, read: 0 });
    expect(second.page.continue).toBe('two');
    expect(second.page.items).toEqual(first.page.items);
    for (const [i, item] of second.page.items.entries()) expect(item).toBe(first.page.items[i]);
    // The metadata after the items: part of what is hashed, so the items are looked up one by one.
    const after = Buffer.from(
      `{"kind":"ConfigMapList","items":${JSON.stringify(objects)},"metadata":{"continue":"three"}}`,
    );
    const third = inRun(after);
    expect(third.counts).toEqual({ reused: 3, read: 0 });
    expect(third.page.continue).toBe('three');
    // One item changed: the page is new, its other items are found by their own bytes.
    const fourth = inRun(listBody([objects[0], object('b', '2'), objects[2]]));
    expect(fourth.counts).toEqual({ reused: 2, read: 1 });
    expect(fourth.page.items[0]).toBe(first.page.items[0]);
    expect(fourth.page.items[1]?.metadata?.resourceVersion).toBe('2');
  });

  it('gives the whole-body error for an unchanged page behind a broken head', () => {
    const store = new ListedObjects();
    const items = JSON.stringify([object('a', '1')]);
    const run = store.beginRun();
    const reuse = run.forCluster('c1').list('s', each);
    readListPage(Buffer.from(`{"metadata":{},"items":${items}}`), { ...settings, each }, reuse);
    reuse.commit();
    run.end();
    const next = store.beginRun().forCluster('c1').list('s', each);
    const broken = Buffer.from(`{"metadata":{"continue":"x",},"items":${items}}`);
    expect(() => readListPage(broken, { ...settings, each }, next)).toThrow(SyntaxError);
  });

  it('keeps what the last complete list returned: a list that fails half-way changes nothing', () => {
    const store = new ListedObjects();
    const first = list(store, [[object('a', '1')], [object('b', '1')]]);
    // Only the first page arrives: nothing is committed.
    list(store, [[object('c', '1')]], 's', false);
    const third = list(store, [[object('a', '1'), object('b', '1')]]);
    expect(third.counts).toEqual({ reused: 2, read: 0 });
    expect(third.items).toEqual(first.items);
    // Objects gone from the list are gone from the store.
    list(store, [[object('a', '1')]]);
    expect(store.size).toBe(1);
  });

  it('keeps scopes apart, and another `each` makes other objects', () => {
    const store = new ListedObjects();
    list(store, [[object('a', '1')]], 'configmaps');
    expect(list(store, [[object('a', '1')]], 'secrets').counts).toEqual({ reused: 0, read: 1 });
    const run = store.beginRun();
    const reuse = run.forCluster('c1').list('configmaps', (o) => o);
    readListPage(listBody([object('a', '1')]), settings, reuse);
    run.end();
    expect(run.counts).toEqual({ reused: 0, read: 1 });
  });

  it('drops the scopes no run used, once the runs under way have ended', () => {
    const store = new ListedObjects();
    list(store, [[object('a', '1')]], 'old');
    list(store, [[object('b', '1')]], 'new');
    expect(store.size).toBe(1);
    // Overlapping runs: the first one's end keeps what the second one still uses.
    const one = store.beginRun();
    const two = store.beginRun();
    const reuse = two.forCluster('c1').list('new', each);
    one.end();
    readListPage(listBody([object('b', '1')]), { ...settings, each }, reuse);
    reuse.commit();
    two.end();
    expect(two.counts).toEqual({ reused: 1, read: 0 });
    expect(store.size).toBe(1);
  });
});
