import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigSecretReader, loadConfig } from '@qontract/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadEmbeddedEngine } from './engine.ts';
import type { EmbeddedEngine } from './types.ts';

/**
 * The examples must stay a valid input for the original qontract-reconcile's
 * ported integrations: examples/original-queries.txt lists the field paths
 * of its documents (in our notation, see the file), and each entry, rebuilt
 * as a GraphQL document, must run on the example app-interface without an
 * error. The original itself is not needed (nor fetched) to check it.
 */

const ROOT = resolve(import.meta.dirname, '../../../..');
const EXAMPLES = join(ROOT, 'examples');
const LIST = join(EXAMPLES, 'original-queries.txt');

interface Entry {
  readonly name: string;
  readonly senders: readonly string[];
  readonly paths: readonly string[];
}

/** Splits at `sep` outside parentheses and brackets. */
function splitTop(text: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === sep && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function parseList(text: string): Entry[] {
  const entries: Array<{ name: string; senders: string[]; paths: string[] }> = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    if (!line.startsWith(' ')) {
      const [name, senders] = line.split(' <- ');
      if (!name || !senders)
        throw new Error(`${LIST}:${i + 1}: expected 'NAME <- INTEGRATION, ...'`);
      entries.push({ name, senders: senders.split(', '), paths: [] });
      return;
    }
    const entry = entries.at(-1);
    if (!entry) throw new Error(`${LIST}:${i + 1}: a path before the first document`);
    const path = line.trim();
    // Only the last segment may be a `{a,b}` group.
    const brace = path.endsWith('}') ? path.lastIndexOf('.{') : -1;
    if (brace < 0 && !path.startsWith('{')) entry.paths.push(path);
    else {
      const prefix = brace < 0 ? '' : `${path.slice(0, brace)}.`;
      const group = path.slice(brace < 0 ? 1 : brace + 2, -1);
      for (const leaf of splitTop(group, ',')) entry.paths.push(prefix + leaf);
    }
  });
  return entries;
}

interface Selection {
  readonly fields: Map<string, Selection>;
  readonly fragments: Map<string, Selection>;
}
const selection = (): Selection => ({ fields: new Map(), fragments: new Map() });

/** The GraphQL document of one entry, its arguments as variables (sent as null: all objects). */
function documentOf(entry: Entry): string {
  const root = selection();
  for (const path of entry.paths) {
    let node = root;
    for (const segment of splitTop(path, '.')) {
      const fragment = /^\[(\w+)\]$/.exec(segment)?.[1];
      const map = fragment ? node.fragments : node.fields;
      const key = fragment ?? segment;
      const next = map.get(key) ?? selection();
      map.set(key, next);
      node = next;
    }
  }
  const variables: string[] = [];
  const field = (segment: string): string => {
    const m = /^(?:(\w+):)?(\w+)(?:\((.*)\))?$/.exec(segment);
    if (!m) throw new Error(`${entry.name}: cannot read the segment '${segment}'`);
    const [, alias, name, args] = m;
    const given = (args ? args.split(',') : []).map((arg) => {
      const [argName, type] = arg.split(':');
      variables.push(`$v${variables.length}: ${type}`);
      return `${argName}: $v${variables.length - 1}`;
    });
    return `${alias ? `${alias}: ` : ''}${name}${given.length ? `(${given.join(', ')})` : ''}`;
  };
  const print = (node: Selection): string => {
    const parts = [
      ...[...node.fields].map(([segment, sub]) =>
        sub.fields.size + sub.fragments.size > 0
          ? `${field(segment)} ${print(sub)}`
          : field(segment),
      ),
      ...[...node.fragments].map(([type, sub]) => `... on ${type} ${print(sub)}`),
    ];
    return `{ ${parts.join(' ')} }`;
  };
  const body = print(root);
  return `query ${entry.name.replaceAll('-', '_')}${variables.length ? `(${variables.join(', ')})` : ''} ${body}`;
}

const entries = parseList(readFileSync(LIST, 'utf8'));

let engine: EmbeddedEngine;
beforeAll(async () => {
  engine = await loadEmbeddedEngine(join(EXAMPLES, 'app-interface'));
});

describe("the examples answer the original's documents", () => {
  it.each(entries.map((e) => [e.name, e] as const))('%s', async (_name, entry) => {
    expect(entry.paths.length).toBeGreaterThan(0);
    const result = await engine.execute(documentOf(entry));
    expect(result.errors?.map((e) => e.message)).toBeUndefined();
  });

  it('lists the documents of every ported integration, and only of those', () => {
    const ported = readdirSync(join(ROOT, 'integrations')).sort();
    const senders = [...new Set(entries.flatMap((e) => e.senders))].sort();
    expect(senders).toEqual(ported);
  });
});

describe('the example secrets (config.toml) hold what the original reads', () => {
  const reader = async () =>
    new ConfigSecretReader(await loadConfig(join(EXAMPLES, 'config.toml')));

  it("every cluster token: the whole secret, with server (the cluster's serverUrl), username and the token field", async () => {
    const secrets = await reader();
    const result = await engine.execute(`{
      clusters_v1 {
        name serverUrl
        automationToken { path field }
        automationTokens { secret { path field } }
        clusterAdminAutomationToken { path field }
        clusterAdminAutomationTokens { secret { path field } }
      }
    }`);
    type Ref = { path: string; field: string } | null;
    const clusters = result.data?.clusters_v1 as Array<{
      name: string;
      serverUrl: string;
      automationToken: Ref;
      automationTokens: Array<{ secret: Ref }> | null;
      clusterAdminAutomationToken: Ref;
      clusterAdminAutomationTokens: Array<{ secret: Ref }> | null;
    }>;
    const problems: string[] = [];
    let checked = 0;
    for (const c of clusters) {
      const refs = [
        c.automationToken,
        c.clusterAdminAutomationToken,
        ...[...(c.automationTokens ?? []), ...(c.clusterAdminAutomationTokens ?? [])].map(
          (t) => t.secret,
        ),
      ].filter((r): r is NonNullable<Ref> => r !== null);
      for (const ref of refs) {
        checked++;
        const secret = await secrets.readAll(ref).catch(() => undefined);
        if (!secret) {
          problems.push(`${c.name}: no secret ${ref.path} in config.toml`);
          continue;
        }
        for (const key of ['server', 'username', ref.field]) {
          if (!secret[key]) problems.push(`${c.name}: ${ref.path} has no '${key}'`);
        }
        if (secret.server && secret.server !== c.serverUrl) {
          problems.push(`${c.name}: ${ref.path} server ${secret.server} is not ${c.serverUrl}`);
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(clusters.length);
    expect(problems).toEqual([]);
  });

  it("every secret reference the original's documents reach can be read", async () => {
    const secrets = await reader();
    const refs = new Map<string, { path: string; field: string }>();
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) for (const v of value) collect(v);
      else if (value !== null && typeof value === 'object') {
        const o = value as Record<string, unknown>;
        // A VaultSecret_v1: the original reads its field.
        if (typeof o.path === 'string' && typeof o.field === 'string') {
          refs.set(`${o.path}#${o.field}`, { path: o.path, field: o.field });
        }
        for (const v of Object.values(o)) collect(v);
      }
    };
    for (const entry of entries) collect((await engine.execute(documentOf(entry))).data);
    expect(refs.size).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const [key, ref] of refs) {
      if ((await secrets.read(ref).catch(() => undefined)) === undefined) missing.push(key);
    }
    expect(missing).toEqual([]);
  });
});
