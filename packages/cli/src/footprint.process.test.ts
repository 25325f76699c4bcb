import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startExampleEnvironment } from '@qontract/testing';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/run-integration.js', import.meta.url));

/**
 * Preloaded into the run: appends the URL of every module the process loads
 * (ES modules and require alike, through Node's synchronous module hooks) to
 * the file named by QR_LOADED_MODULES.
 */
const RECORD_MODULES = `data:text/javascript,${encodeURIComponent(
  "import { registerHooks } from 'node:module'; import { appendFileSync } from 'node:fs'; registerHooks({ load(url, context, next) { appendFileSync(process.env.QR_LOADED_MODULES, url + '\\n'); return next(url, context); } });",
)}`;

/**
 * The footprint of a small run, as a pod pays it (issue 41; the figures are in
 * docs/benchmarks.md, Start-up): what must stay out of a run that does not
 * need it. Each of these cost tens of MiB of a small run's peak RSS.
 */
describe('the footprint of a small run', () => {
  it('a run of openshift-namespaces talks to the clusters without @kubernetes/client-node or undici', async () => {
    const env = await startExampleEnvironment();
    try {
      const loaded = join(await mkdtemp(join(tmpdir(), 'qr-footprint-')), 'modules.txt');
      const child = spawn(process.execPath, [BIN], {
        env: {
          ...process.env,
          NODE_OPTIONS: `--import ${RECORD_MODULES}`,
          QR_LOADED_MODULES: loaded,
          INTEGRATION_NAME: 'openshift-namespaces',
          CONFIG: env.configPath,
          DRY_RUN: '--dry-run',
          RUN_ONCE: 'true',
          LOG_FORMAT: 'json',
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      // run-integration logs to stdout, as the original's run_integration.py.
      let log = '';
      child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(log).toContain('openshift-namespaces finished: success');
      expect(code).toBe(0);
      // It did read the clusters (the example's namespaces do not exist there yet).
      expect(env.server.requests({ verb: 'list' }).length).toBeGreaterThan(0);
      const modules = (await readFile(loaded, 'utf8')).split('\n');
      expect(modules.filter((m) => m.includes('/packages/cli/src/')).length).toBeGreaterThan(0);
      expect(
        modules.filter((m) => /\/node_modules\/(@kubernetes\/client-node|undici)\//.test(m)),
      ).toEqual([]);
    } finally {
      await env.close();
    }
  }, 60_000);
});
