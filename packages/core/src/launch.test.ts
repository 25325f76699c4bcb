import { spawn } from 'node:child_process';
import {
  chmodSync,
  globSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { startHttpFake } from '@qontract/testing/http-fake';
import { makePrivateCa } from '@qontract/testing/private-ca';
import { afterAll, describe, expect, it } from 'vitest';
import {
  decideCaBundle,
  decideGcTuning,
  decideHeapSize,
  GC_FLAGS,
  heapSizeForMemoryLimit,
  launchExecArgv,
  launchFlags,
  readContainerMemoryLimit,
  SHEBANG,
  SYSTEM_CA_BUNDLES,
} from '../launch.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

describe('the heap size for a container memory limit', () => {
  it.each([
    ['no limit', 'no flag', undefined],
    ['cgroup v1 "unlimited" (2^63 - 4096)', 'no flag', Number(2n ** 63n - 4096n)],
    ['zero', 'no flag', 0],
    ['128 MiB (half the limit)', '--max-old-space-size=64', 128 * MiB],
    ['256 MiB (the floor)', '--max-old-space-size=128', 256 * MiB],
    ['512 MiB (320 MiB of headroom)', '--max-old-space-size=192', 512 * MiB],
    ['1 GiB', '--max-old-space-size=704', GiB],
    ['1.5 GiB (75 %)', '--max-old-space-size=1152', 1.5 * GiB],
    ['2 GiB', '--max-old-space-size=1536', 2 * GiB],
    ['4 GiB', '--max-old-space-size=3072', 4 * GiB],
    ['16 GiB', '--max-old-space-size=12288', 16 * GiB],
  ])('%s → %s', (_, flag, limit) => {
    expect(decideHeapSize({ limitBytes: limit }).flag ?? 'no flag').toBe(flag);
    expect(heapSizeForMemoryLimit(limit)).toBe(
      flag === 'no flag' ? undefined : Number(flag.split('=')[1]),
    );
  });
});

describe('decideHeapSize', () => {
  it('sizes the heap from the container limit', () => {
    expect(decideHeapSize({ limitBytes: GiB })).toEqual({
      flag: '--max-old-space-size=704',
      reason: 'container memory limit 1024 MiB',
    });
  });

  it('adds nothing without a limit', () => {
    expect(decideHeapSize({}).flag).toBeUndefined();
    expect(decideHeapSize({ nodeOptions: '--enable-source-maps' }).flag).toBeUndefined();
  });

  it.each([
    ['NODE_OPTIONS', { nodeOptions: '--enable-source-maps --max-old-space-size=300' }],
    ['NODE_OPTIONS with underscores', { nodeOptions: '--max_old_space_size=300' }],
    ['NODE_OPTIONS, value apart', { nodeOptions: '--max-old-space-size 300' }],
    ['node command line', { execArgv: ['--max-old-space-size=300'] }],
  ])(
    'leaves an explicit --max-old-space-size alone (%s), over the env variable too',
    (_, input) => {
      expect(decideHeapSize({ ...input, limitBytes: GiB }).flag).toBeUndefined();
      expect(decideHeapSize({ ...input, override: '200' }).flag).toBeUndefined();
    },
  );

  it('does not take a similar option for the heap size', () => {
    expect(
      decideHeapSize({ nodeOptions: '--max-old-space-size-percentage=50', limitBytes: GiB }).flag,
    ).toBe('--max-old-space-size=704');
  });

  it('takes QONTRACT_MAX_OLD_SPACE_MB over the limit; 0 turns the sizing off', () => {
    expect(decideHeapSize({ override: '900', limitBytes: GiB }).flag).toBe(
      '--max-old-space-size=900',
    );
    expect(decideHeapSize({ override: '900' }).flag).toBe('--max-old-space-size=900');
    expect(decideHeapSize({ override: '0', limitBytes: GiB }).flag).toBeUndefined();
    expect(decideHeapSize({ override: '', limitBytes: GiB }).flag).toBe('--max-old-space-size=704');
  });

  it('refuses an override that is not a number of MiB', () => {
    expect(() => decideHeapSize({ override: '1g' })).toThrow(
      'QONTRACT_MAX_OLD_SPACE_MB must be a whole number of MiB (0 turns the automatic heap size off), got "1g"',
    );
  });
});

const dir = mkdtempSync(join(tmpdir(), 'qr-launch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cgroupTree(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('decideGcTuning', () => {
  it('adds the collector flags by default', () => {
    expect(decideGcTuning({}).flags).toEqual([...GC_FLAGS]);
    expect(GC_FLAGS).toEqual(['--max-semi-space-size=16', '--heap-growing-percent=30']);
    expect(decideGcTuning({ setting: 'on', nodeOptions: '--enable-source-maps' }).flags).toEqual([
      ...GC_FLAGS,
    ]);
  });

  it('keeps each flag node was given, in either spelling', () => {
    expect(decideGcTuning({ nodeOptions: '--max_semi_space_size 32' }).flags).toEqual([
      '--heap-growing-percent=30',
    ]);
    expect(decideGcTuning({ execArgv: ['--heap-growing-percent=80'] }).flags).toEqual([
      '--max-semi-space-size=16',
    ]);
    expect(
      decideGcTuning({ execArgv: ['--max-semi-space-size=8', '--heap_growing_percent=10'] }),
    ).toEqual({ flags: [], reason: 'collector flags given' });
    // A longer option with the same start is not the same option.
    expect(decideGcTuning({ nodeOptions: '--max-semi-space-size-foo=1' }).flags).toEqual([
      ...GC_FLAGS,
    ]);
  });

  it('adds nothing with QONTRACT_GC_TUNING=off and refuses other values', () => {
    expect(decideGcTuning({ setting: 'off' })).toEqual({
      flags: [],
      reason: 'QONTRACT_GC_TUNING=off',
    });
    expect(() => decideGcTuning({ setting: 'yes' })).toThrow(
      'QONTRACT_GC_TUNING must be "on" or "off", got "yes"',
    );
  });

  it("launchExecArgv takes back the first line's flags when off, or where NODE_OPTIONS gives the option", () => {
    const shebang = [...GC_FLAGS];
    const env = { QONTRACT_MAX_OLD_SPACE_MB: '0' };
    expect(launchExecArgv(env, shebang)).toEqual(shebang);
    expect(launchExecArgv({ ...env, QONTRACT_GC_TUNING: 'off' }, shebang)).toEqual([]);
    expect(
      launchExecArgv({ ...env, NODE_OPTIONS: '--max-semi-space-size=64' }, [
        '--enable-source-maps',
        ...shebang,
      ]),
    ).toEqual(['--enable-source-maps', '--heap-growing-percent=30']);
    // Other values given on the command line are the user's: kept, even when off.
    expect(
      launchExecArgv({ ...env, QONTRACT_GC_TUNING: 'off' }, ['--max-semi-space-size=8']),
    ).toEqual(['--max-semi-space-size=8']);
    expect(launchExecArgv({ QONTRACT_MAX_OLD_SPACE_MB: '300' }, shebang)).toEqual([
      ...shebang,
      '--max-old-space-size=300',
    ]);
    expect(() => launchExecArgv({ QONTRACT_GC_TUNING: 'no' }, [])).toThrow('QONTRACT_GC_TUNING');
  });

  it('launchFlags: the heap size first, then the collector flags', () => {
    expect(launchFlags({ QONTRACT_MAX_OLD_SPACE_MB: '300' }, [])).toEqual([
      '--max-old-space-size=300',
      ...GC_FLAGS,
    ]);
    expect(launchFlags({ QONTRACT_MAX_OLD_SPACE_MB: '0', QONTRACT_GC_TUNING: 'off' }, [])).toEqual(
      [],
    );
    expect(launchFlags({ QONTRACT_MAX_OLD_SPACE_MB: '0' }, [...GC_FLAGS])).toEqual([]);
  });
});

describe('the commands of this repository', () => {
  it('start node with the collector flags on their first line', () => {
    const root = join(import.meta.dirname, '../../..');
    const bins = globSync('{packages,tools}/*/bin/*.js', { cwd: root }).filter((f) =>
      readFileSync(join(root, f), 'utf8').includes('@qontract/core/launch'),
    );
    expect(bins.sort()).toEqual([
      'packages/cli/bin/qontract-reconcile.js',
      'packages/cli/bin/run-integration.js',
      'tools/bundle/bin/qontract-bundle.js',
      'tools/mr-check/bin/qontract-mr-check.js',
      'tools/shadow-compare/bin/qontract-shadow-compare.js',
    ]);
    for (const f of bins) {
      expect(readFileSync(join(root, f), 'utf8').split('\n')[0], f).toBe(SHEBANG);
    }
    expect(SHEBANG).toBe(
      '#!/usr/bin/env -S node --max-semi-space-size=16 --heap-growing-percent=30',
    );
  });
});

describe('readContainerMemoryLimit', () => {
  it('reads cgroup v2 memory.max of the container (cgroup namespace: the root)', () => {
    const root = cgroupTree('v2', { 'memory.max': '1073741824\n' });
    expect(readContainerMemoryLimit(root, '0::/\n')).toBe(GiB);
  });

  it('reads "max" as no limit', () => {
    const root = cgroupTree('v2-max', { 'memory.max': 'max\n' });
    expect(readContainerMemoryLimit(root, '0::/\n')).toBeUndefined();
  });

  it("prefers the process's own cgroup when it is visible", () => {
    const root = cgroupTree('v2-own', {
      'memory.max': 'max\n',
      'kubepods.slice/pod-1/memory.max': '536870912\n',
    });
    expect(readContainerMemoryLimit(root, '0::/kubepods.slice/pod-1\n')).toBe(512 * MiB);
  });

  it('reads cgroup v1 memory.limit_in_bytes, the own path first, else the mount root', () => {
    const root = cgroupTree('v1', { 'memory/memory.limit_in_bytes': '2147483648\n' });
    const membership = '5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n';
    expect(readContainerMemoryLimit(root, membership)).toBe(2 * GiB);
    const own = cgroupTree('v1-own', {
      'memory/memory.limit_in_bytes': '9223372036854771712\n',
      'memory/docker/abc/memory.limit_in_bytes': '805306368\n',
    });
    expect(readContainerMemoryLimit(own, membership)).toBe(768 * MiB);
  });

  it('reads the v1 "unlimited" value and a missing file system as no limit', () => {
    const root = cgroupTree('v1-unlimited', {
      'memory/memory.limit_in_bytes': '9223372036854771712\n',
    });
    expect(readContainerMemoryLimit(root, '4:memory:/\n')).toBeUndefined();
    expect(readContainerMemoryLimit(join(dir, 'nothing'), '')).toBeUndefined();
  });
});

describe('launch (a real process)', () => {
  const LAUNCH = new URL('../launch.js', import.meta.url).href;
  const entry = join(dir, 'entry.mjs');
  writeFileSync(
    entry,
    `import { getHeapStatistics } from 'node:v8';
import { getCompileCacheDir } from 'node:module';
export default async function main() {
  process.on('SIGTERM', () => { process.stdout.write('stopping on SIGTERM\\n'); process.exit(7); });
  process.stdout.write(JSON.stringify({ pid: process.pid, execArgv: process.execArgv,
    heapLimitMiB: getHeapStatistics().heap_size_limit / 2 ** 20,
    compileCacheDir: getCompileCacheDir() ?? null, nodeEnv: process.env.NODE_ENV ?? null }) + '\\n');
  if (process.argv[2] === 'wait') setInterval(() => {}, 1000);
}
`,
  );
  const bin = join(dir, 'bin.mjs');
  writeFileSync(
    bin,
    `import { launch } from ${JSON.stringify(LAUNCH)};\nawait launch(${JSON.stringify(entry)}, 'default', 'test-bin');\n`,
  );

  function run(env: Record<string, string>, args: string[] = []) {
    const {
      NODE_COMPILE_CACHE: _dir,
      NODE_DISABLE_COMPILE_CACHE: _off,
      NODE_ENV: _env,
      ...inherited
    } = process.env;
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...inherited, NODE_OPTIONS: '', QONTRACT_MAX_OLD_SPACE_MB: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const firstLine = new Promise<{
      pid: number;
      execArgv: string[];
      heapLimitMiB: number;
      compileCacheDir: string | null;
      nodeEnv: string | null;
    }>((resolve, reject) => {
      child.stdout.on('data', () => {
        if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]!));
      });
      child.on('close', () => reject(new Error(`exited without output: ${stderr}`)));
    });
    return { child, exited, firstLine, output: () => ({ stdout, stderr }) };
  }

  it('re-executes node in place with the heap size QONTRACT_MAX_OLD_SPACE_MB asks for', async () => {
    const r = run({ QONTRACT_MAX_OLD_SPACE_MB: '200' });
    const seen = await r.firstLine;
    expect(await r.exited).toBe(0);
    expect(seen.execArgv).toContain('--max-old-space-size=200');
    // process.execve: same pid, so signals sent to the pod's process reach the run.
    expect(seen.pid).toBe(r.child.pid);
    // heap_size_limit adds the young generation to the old space.
    expect(seen.heapLimitMiB).toBeGreaterThanOrEqual(200);
    expect(seen.heapLimitMiB).toBeLessThan(200 + 256);
  });

  it('re-executes node in place with the collector flags, once; QONTRACT_GC_TUNING=off leaves node as it is', async () => {
    const r = run({ QONTRACT_MAX_OLD_SPACE_MB: '200' });
    const seen = await r.firstLine;
    expect(await r.exited).toBe(0);
    expect(seen.execArgv).toEqual(['--max-old-space-size=200', ...GC_FLAGS]);
    expect(seen.pid).toBe(r.child.pid);
    // heap_size_limit is the old space plus three semi-spaces: 16 MiB ones here, 64 MiB by default.
    expect(seen.heapLimitMiB - 200).toBeLessThanOrEqual(3 * 16);
    const off = run({ QONTRACT_MAX_OLD_SPACE_MB: '200', QONTRACT_GC_TUNING: 'off' });
    const untuned = await off.firstLine;
    expect(untuned.execArgv).toEqual(['--max-old-space-size=200']);
    expect(untuned.heapLimitMiB - 200).toBeGreaterThan(3 * 16);
    expect(await off.exited).toBe(0);
    const none = run({ QONTRACT_MAX_OLD_SPACE_MB: '0', QONTRACT_GC_TUNING: 'off' });
    expect((await none.firstLine).execArgv).toEqual([]);
    expect(await none.exited).toBe(0);
    const bad = run({ QONTRACT_GC_TUNING: 'maybe' });
    bad.firstLine.catch(() => {});
    expect(await bad.exited).toBe(1);
    expect(bad.output().stderr).toContain('test-bin: QONTRACT_GC_TUNING must be "on" or "off"');
  });

  it("starts node once with the collector flags through the bin's first line, twice as `node bin`, or to take them back (off, a NODE_OPTIONS value)", async () => {
    const shebangBin = join(dir, 'shebang-bin.mjs');
    writeFileSync(shebangBin, `${SHEBANG}\n${readFileSync(bin, 'utf8')}`);
    chmodSync(shebangBin, 0o755);
    const count = async (command: string, args: string[], extra: Record<string, string>) => {
      const boots = join(dir, `boots-${Math.random()}`);
      const child = spawn(command, args, {
        env: {
          ...process.env,
          // Node 24 first on PATH, as npm scripts and the image have it.
          PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
          QONTRACT_MAX_OLD_SPACE_MB: '0',
          QONTRACT_GC_TUNING: '',
          ...extra,
          NODE_OPTIONS: `${extra.NODE_OPTIONS ?? ''} --import data:text/javascript,${encodeURIComponent(
            `import { appendFileSync } from 'node:fs'; appendFileSync(${JSON.stringify(boots)}, 'boot\\n');`,
          )}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      return {
        boots: readFileSync(boots, 'utf8').split('\n').filter(Boolean).length,
        execArgv: (JSON.parse(stdout.split('\n')[0]!) as { execArgv: string[] }).execArgv,
      };
    };
    expect(await count(shebangBin, [], {})).toEqual({ boots: 1, execArgv: [...GC_FLAGS] });
    expect(await count(process.execPath, [bin], {})).toEqual({
      boots: 2,
      execArgv: [...GC_FLAGS],
    });
    // Off, or a value of the user's in NODE_OPTIONS: node starts again without the first line's flag.
    expect(await count(shebangBin, [], { QONTRACT_GC_TUNING: 'off' })).toEqual({
      boots: 2,
      execArgv: [],
    });
    const own = await count(shebangBin, [], { NODE_OPTIONS: '--max-semi-space-size=32' });
    expect(own).toEqual({ boots: 2, execArgv: ['--heap-growing-percent=30'] });
  });

  it('keeps an explicit NODE_OPTIONS --max-old-space-size', async () => {
    const r = run({ NODE_OPTIONS: '--max-old-space-size=300', QONTRACT_MAX_OLD_SPACE_MB: '200' });
    const seen = await r.firstLine;
    expect(await r.exited).toBe(0);
    expect(seen.execArgv.join(' ')).not.toContain('max-old-space-size');
    expect(seen.heapLimitMiB).toBeGreaterThanOrEqual(300);
    expect(seen.heapLimitMiB).toBeLessThan(300 + 256);
  });

  it('keeps the compiled code in the temp directory between runs; NODE_DISABLE_COMPILE_CACHE=1 turns it off', async () => {
    const temp = mkdtempSync(join(dir, 'tmp-'));
    const r = run({ TMPDIR: temp });
    const seen = await r.firstLine;
    expect(await r.exited).toBe(0);
    expect(seen.compileCacheDir?.startsWith(temp)).toBe(true);
    expect(readdirSync(seen.compileCacheDir!).length).toBeGreaterThan(0);
    const off = run({ TMPDIR: temp, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect((await off.firstLine).compileCacheDir).toBeNull();
    expect(await off.exited).toBe(0);
  });

  it('runs in production (NODE_ENV) unless the environment says otherwise', async () => {
    const r = run({});
    expect((await r.firstLine).nodeEnv).toBe('production');
    expect(await r.exited).toBe(0);
    const dev = run({ NODE_ENV: 'development' });
    expect((await dev.firstLine).nodeEnv).toBe('development');
    expect(await dev.exited).toBe(0);
  });

  it('passes SIGTERM to the re-executed run', async () => {
    const r = run({ QONTRACT_MAX_OLD_SPACE_MB: '180' }, ['wait']);
    expect((await r.firstLine).execArgv).toContain('--max-old-space-size=180');
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(7);
    expect(r.output().stdout).toContain('stopping on SIGTERM');
  });

  it('stops with a clear message on a bad QONTRACT_MAX_OLD_SPACE_MB', async () => {
    const r = run({ QONTRACT_MAX_OLD_SPACE_MB: 'lots' });
    r.firstLine.catch(() => {});
    expect(await r.exited).toBe(1);
    expect(r.output().stderr).toContain(
      'test-bin: QONTRACT_MAX_OLD_SPACE_MB must be a whole number of MiB',
    );
  });
});

describe('decideCaBundle', () => {
  const nothing = () => false;
  const rhel = (f: string) => f === '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem';

  it('trusts the first system bundle that exists, RHEL/UBI first (where internalCertificates puts it)', () => {
    expect(decideCaBundle({}, [], rhel)).toEqual({
      file: '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
      reason: 'the system CA bundle',
    });
    expect(decideCaBundle({}, [], (f) => SYSTEM_CA_BUNDLES.includes(f)).file).toBe(
      SYSTEM_CA_BUNDLES[0],
    );
    expect(decideCaBundle({}, [], nothing)).toEqual({ reason: 'no system CA bundle' });
  });

  it('takes SSL_CERT_FILE first, and leaves it all to node when node reads extra CAs itself', () => {
    expect(decideCaBundle({ SSL_CERT_FILE: '/x/ca.pem' }, [], rhel).file).toBe('/x/ca.pem');
    expect(
      decideCaBundle({ NODE_EXTRA_CA_CERTS: '/y.pem', SSL_CERT_FILE: '/x' }, [], rhel),
    ).toEqual({ reason: 'NODE_EXTRA_CA_CERTS' });
    expect(decideCaBundle({ NODE_OPTIONS: '--use-system-ca' }, [], rhel).file).toBeUndefined();
    expect(decideCaBundle({}, ['--use-system-ca'], rhel).file).toBeUndefined();
  });
});

describe('launch: the CA bundle (a real process against a TLS fake signed by a private CA)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qr-launch-ca-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const LAUNCH = new URL('../launch.js', import.meta.url).href;
  const entry = join(dir, 'entry.mjs');
  // Both of Node's HTTP clients: fetch (undici: the GraphQL, Vault, GitHub and GitLab
  // clients) and node:https.
  writeFileSync(
    entry,
    `import https from 'node:https';
export default async function main() {
  const url = process.argv[2];
  const viaFetch = await fetch(url).then((r) => r.text(), (e) => 'failed: ' + (e.cause?.code ?? e.message));
  const viaHttps = await new Promise((resolve) => https.get(url, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => resolve(b)); }).on('error', (e) => resolve('failed: ' + e.code)));
  const { getCACertificates } = await import('node:tls');
  const added = getCACertificates('default').length - getCACertificates('bundled').length;
  process.stdout.write(JSON.stringify({ viaFetch, viaHttps, added }) + '\\n');
}
`,
  );
  const bin = join(dir, 'bin.mjs');
  writeFileSync(
    bin,
    `import { launch } from ${JSON.stringify(LAUNCH)};\nawait launch(${JSON.stringify(entry)}, 'default', 'test-bin');\n`,
  );
  const run = async (url: string, env: Record<string, string | undefined>) => {
    const { NODE_EXTRA_CA_CERTS: _n, SSL_CERT_FILE: _s, ...inherited } = process.env;
    const child = spawn(process.execPath, [bin, url], {
      env: { ...inherited, NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return {
      code,
      stderr,
      seen: stdout ? (JSON.parse(stdout) as Record<string, string | number>) : {},
    };
  };

  it('trusts the bundle SSL_CERT_FILE names for fetch and https; without it the private CA is refused', async () => {
    const ca = await makePrivateCa();
    const fake = await startHttpFake({
      tls: ca.server,
      handle: () => ({ status: 200, body: { answer: 'internal' } }),
    });
    try {
      const bundle = join(dir, 'internal-ca.pem');
      writeFileSync(bundle, ca.caCert);
      const trusted = await run(fake.url, { SSL_CERT_FILE: bundle });
      expect(trusted.code, trusted.stderr).toBe(0);
      // Node's own CAs stay: the bundle's certificate is added to them.
      expect(trusted.seen).toEqual({
        viaFetch: '{"answer":"internal"}',
        viaHttps: '{"answer":"internal"}',
        added: 1,
      });
      const untrusted = await run(fake.url, {});
      expect(untrusted.seen).toMatchObject({
        viaFetch: 'failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        viaHttps: 'failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      });
    } finally {
      await fake.close();
    }
  });

  it('stops with a message naming a CA bundle it cannot use', async () => {
    const missing = await run('https://127.0.0.1:1/', { SSL_CERT_FILE: join(dir, 'nope.pem') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `test-bin: cannot read the CA bundle ${join(dir, 'nope.pem')} (SSL_CERT_FILE): ENOENT`,
    );
    const empty = join(dir, 'empty.pem');
    writeFileSync(empty, 'not a certificate\n');
    const none = await run('https://127.0.0.1:1/', { SSL_CERT_FILE: empty });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      `test-bin: the CA bundle ${empty} (SSL_CERT_FILE) holds no PEM certificate`,
    );
    expect(none.stderr).not.toMatch(/^\s+at /m);
  });
});
