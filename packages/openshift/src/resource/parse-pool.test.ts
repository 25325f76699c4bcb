import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpenshiftResource } from './openshift-resource.ts';
import { loadInWorkers } from './parse-pool.ts';
import { parseResource } from './parse-resource.ts';
import { pyJsonDumps } from './py-json.ts';

const shaOf = (text: string) =>
  new OpenshiftResource(parseResource(text), 'x', '1.0.0', { validate: false }).sha256sum();

const configMap = (name: string, extra = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    app: a\ndata:\n  key: value\n  count: "3"\n${extra}`;

describe('loading resource files on worker threads', () => {
  it('gives what parseResource gives, with the sha of the body, a new copy on every call', async () => {
    const texts = [
      configMap('one'),
      configMap('two'),
      // A top-level $schema is dropped, as parseResource drops it.
      `$schema: /openshift/config-map-1.yml\n${configMap('three')}`,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  ratio: 0.5\n  template:\n    spec:\n      containers:\n      - name: web\n        image: x\n        args: [--port, "8080"]\n',
      '{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "Yg=="}}',
      'kind: ConfigMap\nmetadata:\n  name: unicode\ndata:\n  text: "caf\\xe9 \\u2603 \\U0001F600"\n  empty: ""\n  nothing: null\n  flag: yes\n',
    ];
    const pool = loadInWorkers([...texts, texts[0]!], 1);
    try {
      for (const text of texts) {
        const loaded = await pool.get(text);
        expect(loaded, text).toBeDefined();
        expect(pyJsonDumps(loaded!.body())).toBe(pyJsonDumps(parseResource(text)));
        expect(loaded!.body()).toEqual(parseResource(text));
        expect(loaded!.sha256sum).toBe(shaOf(text));
      }
      const loaded = (await pool.get(texts[0]!))!;
      const first = loaded.body();
      const second = loaded.body();
      expect(second).not.toBe(first);
      (first as { kind: string }).kind = 'changed';
      expect((second as { kind: string }).kind).toBe('ConfigMap');
      expect(((await pool.get(texts[0]!))!.body() as { kind: string }).kind).toBe('ConfigMap');
      expect(pool.counts).toEqual({ loaded: texts.length, left: 0 });
      expect(await pool.get('kind: Never\n')).toBeUndefined();
    } finally {
      pool.close();
    }
  });

  it('leaves to the caller every document that does not cross as JSON, and every error', async () => {
    const left = [
      'kind: ConfigMap\nmetadata: {name: a}\nvalue: 1.0\n', // a Python float JS reads as an int
      'kind: ConfigMap\nmetadata: {name: a}\n1: one\n', // an int key
      'kind: ConfigMap\nmetadata: {name: a}\nwhen: 2026-01-01\n', // a date
      'kind: ConfigMap\nmetadata: &m {name: a}\ncopy: *m\n', // an alias
      'kind: ConfigMap\nmetadata: {name: a}\nbig: 123456789012345678901234567890\n', // a bigint
      'kind: ConfigMap\nmetadata: {name: a}\nnan: .nan\n',
      'kind: ConfigMap\nmetadata: {name: a}\nordered: !!omap [{a: 1}]\n',
      'kind: ConfigMap\nmetadata: {name: a}\npairs: !!pairs [{a: 1}]\n',
      'kind: ConfigMap\nmetadata: {name: a}\n__proto__: {polluted: true}\n',
      '- a list\n- is not a resource\n',
      '',
      'kind: ConfigMap\nmetadata:\n  name: a\n bad: indentation\n',
      'key: "unterminated\n',
    ];
    const pool = loadInWorkers(left, 2);
    try {
      for (const text of left) expect(await pool.get(text), text).toBeUndefined();
      expect(pool.counts).toEqual({ loaded: 0, left: left.length });
    } finally {
      pool.close();
    }
  });

  it('agrees with PyYAML 6.0.3 on every recorded case it loads', async () => {
    const { cases } = JSON.parse(
      readFileSync(new URL('./yaml/pyyaml-vectors.json', import.meta.url), 'utf8'),
    ) as { cases: { text: string; json?: string; loadError?: string; dumpError?: string }[] };
    const pool = loadInWorkers(
      cases.map((c) => c.text),
      2,
    );
    try {
      let loaded = 0;
      for (const c of cases) {
        const value = await pool.get(c.text);
        if (value === undefined) continue;
        loaded++;
        // Only documents PyYAML loads come back; `$schema` aside, they dump as PyYAML's do.
        expect(c.loadError, c.text).toBeUndefined();
        const expected = JSON.parse(c.json!) as Record<string, unknown>;
        delete expected.$schema;
        expect(JSON.parse(pyJsonDumps(value.body()))).toEqual(expected);
      }
      // Most recorded documents are mappings of JSON data: the workers did load them.
      expect(loaded).toBeGreaterThan(cases.length / 4);
    } finally {
      pool.close();
    }
  });

  it('loads every resource file of the example app-interface as the calling thread does', async () => {
    const root = new URL('../../../../examples/app-interface/resources', import.meta.url).pathname;
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(readFileSync(path, 'utf8'));
      }
    };
    walk(root);
    expect(files.length).toBeGreaterThan(0);
    const pool = loadInWorkers(files, 1);
    try {
      for (const text of files) {
        const value = await pool.get(text);
        if (value === undefined) continue; // a template: not a mapping of JSON data
        expect(value.body()).toEqual(parseResource(text));
        expect(value.sha256sum).toBe(shaOf(text));
      }
      expect(pool.counts.loaded).toBeGreaterThan(0);
    } finally {
      pool.close();
    }
  });

  it('with no threads, or once closed, leaves everything to the caller', async () => {
    const none = loadInWorkers([configMap('a')], 0);
    expect(await none.get(configMap('a'))).toBeUndefined();
    expect(none.counts).toEqual({ loaded: 0, left: 1 });

    const texts = Array.from({ length: 2000 }, (_, i) => configMap(`cm-${i}`));
    const closed = loadInWorkers(texts, 1);
    closed.close();
    const values = await Promise.all(texts.map((t) => closed.get(t)));
    expect(values.every((v) => v === undefined)).toBe(true);
  });

  it('a worker that runs out of memory leaves its files to the caller', async () => {
    // About 60,000 keys: far beyond a worker heap of 4 MiB.
    const huge = `kind: ConfigMap\nmetadata: {name: huge}\ndata:\n${Array.from(
      { length: 60_000 },
      (_, i) => `  key-${i}: value-${i}\n`,
    ).join('')}`;
    const small = configMap('small');
    const pool = loadInWorkers([huge, small], 1, {
      resourceLimits: { maxOldGenerationSizeMb: 4, maxYoungGenerationSizeMb: 1 },
    });
    try {
      expect(await pool.get(huge)).toBeUndefined();
      expect(await pool.get(small)).toBeUndefined();
      expect(pool.counts).toEqual({ loaded: 0, left: 2 });
    } finally {
      pool.close();
    }
  });
});
