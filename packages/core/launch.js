// Runs a TypeScript entry point of this workspace under Node >= 22.12 with
// native type stripping. When the node running this file is older, it
// re-executes itself with the Node 24 that `npm install` placed in the
// workspace (the `node` devDependency), so the commands work on machines
// whose system Node is 20.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const modern = major > 22 || (major === 22 && minor >= 12);

/**
 * Runs `exportName` of the TypeScript module `entry` (a path). `program` names the command in
 * the error printed when no suitable Node exists.
 */
export async function launch(entry, exportName, program = 'qontract-reconcile') {
  if (!modern) {
    let dir = dirname(fileURLToPath(import.meta.url));
    for (;;) {
      const candidate = join(dir, 'node_modules', 'node', 'bin', 'node');
      if (existsSync(candidate)) {
        const r = spawnSync(candidate, [process.argv[1], ...process.argv.slice(2)], {
          stdio: 'inherit',
        });
        process.exit(r.status ?? 1);
      }
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
    console.error(
      `${program} needs Node >= 22.12 (found ${process.versions.node}); run 'npm install' in the repository first.`,
    );
    process.exit(1);
  }
  const mod = await import(pathToFileURL(entry).href);
  await mod[exportName]();
}
