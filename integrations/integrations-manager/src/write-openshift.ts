import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openshiftFiles } from './openshift-files.ts';

// Writes the generated files of openshift/ (openshift-files.test.ts fails when they are stale).
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
for (const [path, text] of Object.entries(openshiftFiles())) {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
  console.log(`wrote ${path}`);
}
