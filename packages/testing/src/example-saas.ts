import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { FakeGitHub } from './fake-github.ts';
import type { FakeGitlab } from './fake-gitlab.ts';
import type { FakeRegistry } from './fake-registry.ts';

/** The repositories of the example saas files, as files (`examples/repos/<host>/<owner>/<name>/`). */
const REPOS_DIR = resolve(import.meta.dirname, '../../../examples/repos');

/**
 * The commits the example saas files pin their production targets to
 * (`examples/app-interface/data/services/example-app/cicd/*.yml`): seeded as
 * the tips of `main`, so stage (which follows `main`) deploys and publishes
 * them and production's promotion gate lets them through.
 */
const EXAMPLE_APP_PRODUCTION_SHA = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const EXAMPLE_WORKER_PRODUCTION_SHA = '0123456789abcdef0123456789abcdef01234567';
/** The example app-interface's `hashLength`: images are tagged with this many characters of the commit. */
const EXAMPLE_HASH_LENGTH = 7;

async function repoFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    out[relative(dir, file)] = await readFile(file, 'utf8');
  }
  return out;
}

export interface ExampleSaasSeed {
  /** `main` of example/example-app on the fake GitHub. */
  readonly appSha: string;
  /** `main` of service/example-app on the fake GitLab. */
  readonly workerSha: string;
}

/**
 * Seeds what the example saas files deploy from: the example app's
 * repository on the fake GitHub (`example/example-app`), the worker's on the
 * fake GitLab (`service/example-app`, group and project created when
 * missing), both with `main` at the production commits, and their images
 * (tagged with the commit's first 7 characters) on the fake registry.
 */
export async function seedExampleSaasRepos(fakes: {
  readonly github: FakeGitHub;
  readonly gitlab: FakeGitlab;
  readonly registry: FakeRegistry;
}): Promise<ExampleSaasSeed> {
  const { github, gitlab, registry } = fakes;
  github.addRepo('example', 'example-app');
  github.pushCommit(
    'example/example-app',
    'main',
    await repoFiles(join(REPOS_DIR, 'github/example/example-app')),
    { message: 'Example app' },
  );
  github.addCommit('example/example-app', 'main', EXAMPLE_APP_PRODUCTION_SHA);

  gitlab.addGroup('service');
  if (!gitlab.projects('service').some((p) => p.name === 'example-app')) {
    gitlab.addProject('service', 'example-app');
  }
  gitlab.addCommit('service/example-app', 'main', {
    files: await repoFiles(join(REPOS_DIR, 'gitlab/service/example-app')),
    message: 'Example worker',
    sha: EXAMPLE_WORKER_PRODUCTION_SHA,
  });

  const tag = (sha: string) => sha.slice(0, EXAMPLE_HASH_LENGTH);
  registry.pushImage('example/example-app', tag(EXAMPLE_APP_PRODUCTION_SHA));
  registry.pushImage('example/example-worker', tag(EXAMPLE_WORKER_PRODUCTION_SHA));
  return { appSha: EXAMPLE_APP_PRODUCTION_SHA, workerSha: EXAMPLE_WORKER_PRODUCTION_SHA };
}
