import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FakeGitlab } from './fake-gitlab.ts';

/**
 * app-interface as a GitLab repository, for what opens merge requests on it
 * (saas-auto-promotions-manager): the data files of a local app-interface
 * copy pushed to an `app-sre/app-interface` project of the fake GitLab, and a
 * merged merge request written back into the copy (what a merge and the next
 * bundle do). Shared by the e2e tests and the demo.
 */

/** The app-interface repository on the fake GitLab. */
export const APP_INTERFACE_PROJECT = 'app-sre/app-interface';

/**
 * Pushes `paths` (below `data/`) of `appInterfaceDir` to `app-sre/app-interface`
 * (branch `master`) and points the copy's settings `repoUrl` at it.
 */
export async function seedAppInterfaceRepo(
  gitlab: FakeGitlab,
  appInterfaceDir: string,
  paths: readonly string[],
): Promise<void> {
  gitlab.addGroup('app-sre');
  gitlab.addProject('app-sre', 'app-interface');
  const files: Record<string, string> = {};
  for (const path of paths) {
    files[`data${path}`] = await readFile(join(appInterfaceDir, 'data', path), 'utf8');
  }
  gitlab.pushCommit(APP_INTERFACE_PROJECT, 'master', files, { message: 'bundle' });
  const settings = join(appInterfaceDir, 'data/app-interface/app-interface-settings.yml');
  const text = await readFile(settings, 'utf8');
  await writeFile(
    settings,
    text.replace(/^repoUrl: .*$/m, `repoUrl: ${gitlab.url}/${APP_INTERFACE_PROJECT}`),
  );
}

/** A change merged into app-interface: the local copy's file and the repository's `master`. */
export async function mergeAppInterfaceChange(
  gitlab: FakeGitlab,
  appInterfaceDir: string,
  path: string,
  change: (text: string) => string,
): Promise<void> {
  const file = join(appInterfaceDir, 'data', path);
  const text = change(await readFile(file, 'utf8'));
  await writeFile(file, text);
  gitlab.pushCommit(
    APP_INTERFACE_PROJECT,
    'master',
    { [`data${path}`]: text },
    { message: 'merge' },
  );
}

/** Merges merge request `iid` of the repository and writes its files into the local copy. */
export async function mergeAppInterfaceMergeRequest(
  gitlab: FakeGitlab,
  appInterfaceDir: string,
  iid: number,
): Promise<void> {
  const changes = gitlab.mergeRequestChanges(APP_INTERFACE_PROJECT, iid);
  gitlab.mergeMergeRequest(APP_INTERFACE_PROJECT, iid);
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) throw new Error(`merge request !${iid} deletes ${path}: not supported`);
    await writeFile(join(appInterfaceDir, path), content);
  }
}
