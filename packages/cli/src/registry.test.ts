import { type AnyIntegration, defineIntegration } from '@qontract/core';
import { describe, expect, it } from 'vitest';
import { runCli } from './main.ts';
import { type LazyIntegration, loadIntegration, registry } from './registry.ts';

const io = () => {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: {
      stdout: { write: (s: string) => (out.stdout += s) },
      stderr: { write: (s: string) => (out.stderr += s) },
    },
  };
};

/** A lazy entry that counts its loads. */
function counted(name: string): LazyIntegration & { loads: number } {
  const definition: AnyIntegration = defineIntegration({
    name,
    version: '0.1.0',
    description: `The ${name}.`,
    options: { flag: { type: 'boolean', default: false, describe: 'a flag' } },
    run: async () => {},
  });
  const entry = {
    name,
    description: `The ${name}.`,
    loads: 0,
    load: async () => {
      entry.loads++;
      return definition;
    },
  };
  return entry;
}

describe('the lazy integration registry', () => {
  it('--help lists every integration without loading any', async () => {
    const a = counted('first-one');
    const b = counted('second-one');
    const { out, io: streams } = io();
    expect(await runCli(['--help'], { registry: [a, b], io: streams, env: {} })).toBe(0);
    expect(out.stdout).toContain('first-one');
    expect(out.stdout).toContain('The second-one.');
    expect([a.loads, b.loads]).toEqual([0, 0]);
  });

  it('loads only the named integration, to parse its options and show its help', async () => {
    const a = counted('first-one');
    const b = counted('second-one');
    const { out, io: streams } = io();
    const argv = ['--log-level', 'info', '--config', 'second-one', 'first-one', '--flag', '--help'];
    expect(await runCli(argv, { registry: [a, b], io: streams, env: {} })).toBe(0);
    expect(out.stdout).toContain('--flag');
    expect([a.loads, b.loads]).toEqual([1, 0]);
  });

  it('an unknown command or a bad global option is a usage error', async () => {
    const a = counted('first-one');
    for (const argv of [['no-such-one'], ['--log-level', 'LOUD', 'first-one']]) {
      const { out, io: streams } = io();
      expect(await runCli(argv, { registry: [a], io: streams, env: {} })).toBe(2);
      expect(out.stderr).toMatch(/Error: /);
    }
  });

  it('every entry names and describes the integration it loads', async () => {
    for (const entry of registry) {
      const definition = await loadIntegration(entry);
      expect({ name: definition.name, description: definition.description }).toEqual({
        name: entry.name,
        description: entry.description,
      });
    }
  }, 60_000);
});
