import { fileURLToPath } from 'node:url';
import { type ExampleEnvironment, startExampleEnvironment } from '@qontract/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from './main.ts';

// The original CLI cannot run here (Python): a STAND-IN plays it
// (test-support/original-stand-in.ts). It runs this project's CLI with the
// original's command line and prints that run's action lines in the
// original's log format, in another order; STAND_IN_PLANT=1 makes it plant a
// difference.
const STAND_IN = `${process.execPath} ${fileURLToPath(new URL('./test-support/original-stand-in.ts', import.meta.url))}`;

let env: ExampleEnvironment;
beforeAll(async () => {
  env = await startExampleEnvironment();
});
afterAll(() => env?.close());

async function compare(extraEnv: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await main(
    [
      '--original',
      STAND_IN,
      '--config',
      env.configPath,
      'openshift-namespaces',
      'openshift-rolebindings --cluster-name appint-ex-01',
    ],
    {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
      env: { ...process.env, ...extraEnv },
    },
  );
  return { code, out, err };
}

describe('qontract-shadow-compare', { timeout: 60_000 }, () => {
  it('identical plans: nothing reported, exit 0, nothing written', async () => {
    env.server.resetLog();
    const r = await compare();
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/^openshift-namespaces: identical \(([1-9]\d*) action line\(s\)\)$/m);
    expect(r.out).toMatch(
      /^openshift-rolebindings --cluster-name appint-ex-01: identical \(\d+ action line\(s\)\)$/m,
    );
    expect(r.out).not.toContain('only in');
    expect(r.out).toContain('2 integration(s) compared: the plans are identical');
    expect(env.server.mutatingRequests()).toEqual([]);
  });

  it('a planted difference: every differing line reported, exit 1', async () => {
    const r = await compare({ STAND_IN_PLANT: '1' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('openshift-namespaces: DIFFERENT');
    expect(r.out).toContain(
      "  only in the original: ['delete', 'privileged=False', 'appint-ex-01', 'example-app-stage', 'ConfigMap', 'planted']",
    );
    expect(r.out).toMatch(/^ {2}only in ours: {9}\['/m);
    expect(r.out).toContain('2 integration(s) compared: 2 differ');
  });

  it('an original that cannot start is reported, not thrown', async () => {
    let out = '';
    const code = await main(
      [
        '--original',
        '/nonexistent/qontract-reconcile',
        '--config',
        env.configPath,
        'openshift-namespaces',
      ],
      { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } },
    );
    expect(code).toBe(1);
    expect(out).toContain('cannot run /nonexistent/qontract-reconcile');
  });

  it('usage errors exit 2', async () => {
    let err = '';
    const code = await main(['openshift-namespaces'], {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      env: {},
    });
    expect(code).toBe(2);
    expect(err).toContain("missing --original 'COMMAND'");
  });
});
