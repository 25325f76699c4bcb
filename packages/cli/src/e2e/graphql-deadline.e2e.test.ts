import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../main.ts';

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

/** A TCP server on 127.0.0.1 that accepts every connection and never answers. */
async function silentServer(): Promise<string> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  opened.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}/graphql`;
}

describe('the GraphQL deadline', () => {
  it('ends a run whose GraphQL server never answers at the deadline, naming the server and the deadline', async () => {
    const server = await silentServer();
    const dir = await mkdtemp(join(tmpdir(), 'qr-gql-deadline-'));
    const config = join(dir, 'config.toml');
    await writeFile(config, `[graphql]\nserver = "${server}"\n`);
    let stderr = '';
    const started = performance.now();
    const argv = ['--config', config, '--log-format', 'text', '--dry-run', 'openshift-namespaces'];
    const code = await runCli(argv, {
      env: { QONTRACT_GQL_DEADLINE_SECS: '1' },
      io: {
        stdout: { write: () => true },
        stderr: { write: (s: string) => (stderr += s) },
      },
    });
    const seconds = (performance.now() - started) / 1000;
    expect(code).toBe(1);
    expect(stderr).toContain(
      `the GraphQL server at ${server} did not answer within 1s, the deadline for all GraphQL requests of a run (QONTRACT_GQL_DEADLINE_SECS)`,
    );
    expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
    // Without the deadline: 5 attempts of 60 s on /sha256. Loose on purpose: a loaded machine.
    expect(seconds).toBeLessThan(30);
  });

  it('refuses a deadline that is not a positive number of seconds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qr-gql-deadline-'));
    const config = join(dir, 'config.toml');
    await writeFile(config, `[graphql]\nserver = "${await silentServer()}"\n`);
    let stderr = '';
    const code = await runCli(['--config', config, '--dry-run', 'openshift-namespaces'], {
      env: { QONTRACT_GQL_DEADLINE_SECS: 'soon' },
      io: { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } },
    });
    expect(code).toBe(1);
    expect(stderr).toContain(
      "QONTRACT_GQL_DEADLINE_SECS must be a number of seconds greater than 0, not 'soon'",
    );
  });
});
