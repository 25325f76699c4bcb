import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { editFile, messages, runQontractReconcile } from './harness.ts';

const EXAMPLE = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../examples/app-interface',
);
const CICD = 'data/services/example-app/cicd';
const APP_FILE = `${CICD}/saas-example-app.yml`;
const WORKER_FILE = `${CICD}/saas-example-worker.yml`;
/** The example's self-service role of example-app (the validator requires one). */
const SELF_SERVICE_ROLE = 'data/access/roles/example-app-saas-owners.yml';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A copy of the example app-interface, changed by `change`. */
async function exampleCopy(change?: (dir: string) => Promise<void>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'saas-file-validator-'));
  dirs.push(root);
  const dir = join(root, 'app-interface');
  await cp(EXAMPLE, dir, { recursive: true });
  await change?.(dir);
  const config = join(root, 'config.toml');
  await writeFile(config, `[graphql]\nserver = "file://${dir}"\n`);
  return config;
}

const validate = async (config: string) => {
  const run = await runQontractReconcile(['--config', config, 'saas-file-validator']);
  const errors = run.logs
    .filter((l) => l.level >= 50)
    .map((l) => `${String(l.scope ?? '')}: ${l.msg}`);
  return { run, errors };
};

describe('saas-file-validator end to end', { timeout: 60_000 }, () => {
  it('accepts the example saas files (exit 0) and writes nothing', async () => {
    const { run, errors } = await validate(await exampleCopy());
    expect(errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(messages(run)).toContain('3 saas file(s) checked, 0 problem(s) found');
  });

  const WORKER =
    'saas file saas-example-worker (/services/example-app/cicd/saas-example-worker.yml)';
  const WORKER_RT = `${WORKER}, resource template example-worker`;
  const WORKER_PROD = `${WORKER_RT}, target appint-ex-02/example-app-production`;

  it.each<[string, (dir: string) => Promise<void>, string[]]>([
    [
      'an app without self-service roles',
      (dir) => rm(join(dir, SELF_SERVICE_ROLE)),
      [
        'saas file saas-example-app (/services/example-app/cicd/saas-example-app.yml): app example-app has no self-service roles',
        'saas file saas-example-edge (/services/example-app/cicd/saas-example-edge.yml): app example-app has no self-service roles',
        `${WORKER}: app example-app has no self-service roles`,
      ],
    ],
    [
      'auto promotion with a branch ref',
      (dir) =>
        editFile(join(dir, WORKER_FILE), (t) =>
          t.replace('ref: 0123456789abcdef0123456789abcdef01234567', 'ref: main'),
        ),
      [`${WORKER_PROD}: auto promotion needs a commit sha as ref, not 'main'`],
    ],
    [
      'a subscribed channel nobody publishes',
      (dir) =>
        editFile(join(dir, WORKER_FILE), (t) =>
          t.replace(
            'publish:\n            - example-worker-stage-deployed',
            'publish:\n            - renamed',
          ),
        ),
      [
        'saas file /services/example-app/cicd/saas-example-worker.yml, resource template example-worker: subscribes to channel example-worker-stage-deployed, which no target publishes',
      ],
    ],
    [
      'a promotion between different repositories',
      (dir) =>
        editFile(join(dir, APP_FILE), (t) =>
          t.replace(
            'subscribe:\n            - example-app-stage-deployed',
            'subscribe:\n            - example-worker-stage-deployed',
          ),
        ),
      [
        'saas file /services/example-app/cicd/saas-example-app.yml, resource template example-app: subscribes to channel example-worker-stage-deployed from a different repository: publisher /services/example-app/cicd/saas-example-worker.yml resource template example-worker deploys https://127.0.0.1:16460/service/example-app, this one https://github.com/example/example-app',
      ],
    ],
    [
      'an IMAGE_TAG that is a prefix of the ref',
      (dir) =>
        editFile(join(dir, WORKER_FILE), (t) =>
          t.replace(
            'WORKER_CONCURRENCY: 8',
            'WORKER_CONCURRENCY: 8\n          IMAGE_TAG: "0123456"',
          ),
        ),
      [
        `${WORKER_PROD}: IMAGE_TAG 0123456 is a prefix of ref 0123456789abcdef0123456789abcdef01234567: remove the IMAGE_TAG parameter, it is generated from the commit`,
      ],
    ],
    [
      'a repository that is no code component',
      (dir) =>
        editFile(join(dir, WORKER_FILE), (t) =>
          t.replace(
            'url: https://127.0.0.1:16460/service/example-app',
            'url: https://gitlab.example.com/nobody/worker',
          ),
        ),
      [
        'saas file saas-example-worker: repository https://gitlab.example.com/nobody/worker is not a codeComponents url of any app',
      ],
    ],
    [
      'an environment value repeated in a target parameter',
      async (dir) => {
        await editFile(join(dir, 'data/products/example/environments/production.yml'), (t) =>
          t.replace('parameters:\n', 'parameters:\n  DOMAIN: example.com\n'),
        );
        await editFile(join(dir, WORKER_FILE), (t) =>
          t.replace(
            'WORKER_CONCURRENCY: 8',
            'WORKER_CONCURRENCY: 8\n          URL: https://worker.example.com',
          ),
        );
      },
      [
        `${WORKER_PROD}: parameter URL: "https://worker.example.com" repeats DOMAIN: "example.com" of environment example-production; use "URL: https://worker.\${DOMAIN}"`,
      ],
    ],
  ])('fails (exit 1) on %s, naming the saas file', async (_, change, expected) => {
    const { run, errors } = await validate(await exampleCopy(change));
    expect(run.code).toBe(1);
    expect(errors).toEqual(expected);
  });
});
