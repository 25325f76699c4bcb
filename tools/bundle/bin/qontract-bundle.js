#!/usr/bin/env node
// Runs src/main.ts with Node's type stripping. An older system node
// re-executes this file with the Node 24 the workspace installs (the `node`
// devDependency), like the umbrella CLI's launcher.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 22 || (major === 22 && minor >= 12)) {
  const entry = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const mod = await import(pathToFileURL(entry).href);
  await mod.default();
} else {
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
    `qontract-bundle needs Node >= 22.12 (found ${process.versions.node}); run 'npm install' first.`,
  );
  process.exit(1);
}
