import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { openshiftFiles } from './openshift-files.ts';

// npm run openshift: writes the generated files of openshift/ (openshift-files.test.ts fails
// when they are stale).
const root = resolve(import.meta.dirname, '../../..');
for (const [path, text] of Object.entries(openshiftFiles())) {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
  console.log(`wrote ${path}`);
}
