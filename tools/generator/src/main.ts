import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { scaffoldIntegration } from './scaffold.ts';

// npm run new-integration -- <name> "<one-line description>"
const [name, ...words] = process.argv.slice(2);
if (!name || words.length === 0) {
  console.error('usage: npm run new-integration -- <name> "<one-line description>"');
  process.exit(2);
}
const root = resolve(import.meta.dirname, '../../..');
try {
  const written = await scaffoldIntegration({ name, description: words.join(' '), root });
  console.log(written.map((f) => `  wrote ${f}`).join('\n'));
} catch (e) {
  console.error(`error: ${(e as Error).message}`);
  process.exit(1);
}
// Link the new workspace package, regenerate the README's integration list, format.
const steps: string[][] = [
  ['npm', 'install', '--no-audit', '--no-fund'],
  // The typed document of the new query (src/<name>.generated.ts).
  ['npm', 'run', 'codegen'],
  ['npm', 'run', 'readme'],
  // Formatted as the project's linter wants, so the new package passes `npm test` at once.
  [
    'npx',
    'biome',
    'check',
    '--write',
    `integrations/${name}`,
    'packages/cli/src/registry.ts',
    'README.md',
  ],
];
for (const cmd of steps) {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
console.log(
  `\nintegrations/${name} is ready: edit src/${name}.graphql (then 'npm run codegen'), desired.ts and its test.`,
);
