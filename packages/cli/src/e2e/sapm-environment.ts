import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { editFile } from './harness.ts';
import type { SaasEnvironment } from './saas-environment.ts';

/** The app-interface repository on the fake GitLab, where SAPM opens its merge requests. */
export const APP_INTERFACE_PROJECT = 'app-sre/app-interface';

/**
 * Puts the example app-interface's saas files into an `app-sre/app-interface`
 * project of the fake GitLab (branch `master`, paths under `data/`) and
 * points app-interface's `repoUrl` at it, as the real app-interface repository.
 */
export async function seedAppInterfaceRepo(
  e: SaasEnvironment,
  paths: readonly string[],
): Promise<void> {
  e.gitlab.addGroup('app-sre');
  e.gitlab.addProject('app-sre', 'app-interface');
  const files: Record<string, string> = {};
  for (const path of paths) {
    files[`data${path}`] = await readFile(join(e.env.appInterfaceDir, 'data', path), 'utf8');
  }
  e.gitlab.pushCommit(APP_INTERFACE_PROJECT, 'master', files, { message: 'bundle' });
  await editFile(
    join(e.env.appInterfaceDir, 'data/app-interface/app-interface-settings.yml'),
    (t) => t.replace(/^repoUrl: .*$/m, `repoUrl: ${e.gitlab.url}/${APP_INTERFACE_PROJECT}`),
  );
}

/**
 * "Merges" a merge request of the fake GitLab's app-interface project: GitLab
 * merges it, and its files are written into the app-interface data
 * directory the next runs read (what a merge and a new bundle do).
 */
export async function mergeAppInterfaceMergeRequest(
  e: SaasEnvironment,
  iid: number,
): Promise<void> {
  const changes = e.gitlab.mergeRequestChanges(APP_INTERFACE_PROJECT, iid);
  e.gitlab.mergeMergeRequest(APP_INTERFACE_PROJECT, iid);
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) throw new Error(`merge request !${iid} deletes ${path}: not supported`);
    await writeFile(join(e.env.appInterfaceDir, path), content);
  }
}
