import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/run-integration.js', import.meta.url));

describe('run-integration as a process', () => {
  it('stops on SIGTERM after the run in progress, exiting with its code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qr-sigterm-'));
    const config = join(dir, 'config.toml');
    // No app-interface behind this: each run fails fast (exit 1), the loop sleeps 600 s in between.
    await writeFile(config, `[graphql]\nserver = "file://${join(dir, 'missing')}"\n`);
    const child = spawn(process.execPath, [BIN], {
      env: {
        ...process.env,
        INTEGRATION_NAME: 'openshift-namespaces',
        CONFIG: config,
        DRY_RUN: '--dry-run',
        PROMETHEUS_PORT: '0',
        SLEEP_DURATION_SECS: '600',
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const finished = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        // The first run has finished: the loop is now sleeping.
        if (stderr.includes('openshift-namespaces finished')) resolve();
      });
    });
    child.kill('SIGTERM');
    const code = await finished;
    expect(code).toBe(1);
    expect(stderr).toContain('received SIGTERM');
    expect(stderr).toContain('stopping after a stop signal; last exit code 1');
  });
});
