import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export interface Pushgateway {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** The lines of the gateway's own /metrics: every pushed series, with its grouping labels. */
  scrape(): Promise<string[]>;
  close(): Promise<void>;
}

// Basic auth, as app-sre's gateway has; the hash is bcrypt's of PASSWORD (cost 4, to start quickly).
const USERNAME = 'pusher';
const PASSWORD = 'push-secret-for-tests';
const HASH = '$2b$04$aTJHFVQU.nCbOIIn4BnAeure7Ipniykp03YG0G6qSfPHhDgt9Q/gC';

/**
 * Debian's prometheus-pushgateway (`apt-get install prometheus-pushgateway`;
 * .ci/run installs it when missing) on a free port of 127.0.0.1, with basic
 * auth, its data in a temporary directory removed by close().
 */
export async function startPushgateway(): Promise<Pushgateway> {
  const dir = await mkdtemp(join(tmpdir(), 'qr-pushgateway-'));
  const web = join(dir, 'web.yml');
  await writeFile(web, `basic_auth_users:\n  ${USERNAME}: '${HASH}'\n`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const auth = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;
  const gateway = spawn(
    'prometheus-pushgateway',
    [
      `--web.listen-address=127.0.0.1:${port}`,
      `--web.config.file=${web}`,
      `--persistence.file=${join(dir, 'pushgateway.data')}`,
    ],
    { stdio: 'ignore' },
  );
  const close = async () => {
    // It writes its persistence file as it stops: the directory is removed after that.
    const exited = new Promise((r) => gateway.once('exit', r));
    if (gateway.exitCode === null && gateway.kill()) await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const failed = new Promise<never>((_, reject) =>
    gateway.once('error', (e) =>
      reject(new Error(`cannot start prometheus-pushgateway (apt-get install it): ${e.message}`)),
    ),
  );
  try {
    await Promise.race([failed, ready(`${url}/-/ready`, auth)]);
  } catch (e) {
    await close();
    throw e;
  }
  return {
    url,
    username: USERNAME,
    password: PASSWORD,
    scrape: async () =>
      (await (await fetch(`${url}/metrics`, { headers: { Authorization: auth } })).text()).split(
        '\n',
      ),
    close,
  };
}

/** Resolves once `target` answers 200 (the gateway has started), within 10 s. */
async function ready(target: string, auth: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if ((await fetch(target, { headers: { Authorization: auth } })).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`prometheus-pushgateway did not start at ${target}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
