/**
 * `npm run build:bundle -w @qontract/qontract-reconcile`: bundles the commands with esbuild into
 * `bundle/` (gitignored), the only code this package ships.
 *
 * Per command two files: `<command>.mjs`, the Node-version launcher of
 * `@qontract/core/launch` (its first line starts node with the collector's
 * flags; it re-executes under a heap sized for the pod's memory limit, so it
 * must stay small: in a pod it is loaded twice), and
 * `<command>.main.mjs`, everything the command runs. Code shared by the
 * commands and modules imported lazily (the AWS SDK of the S3 state store)
 * become chunks beside them, so a start-up parses only what it uses. All
 * outputs sit in one directory: `main.ts` reads the version from
 * `../package.json` relative to its own file, which is then this package's
 * manifest.
 */
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHEBANG } from '@qontract/core/launch';
import { build, type Plugin } from 'esbuild';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** Where `npm run build:bundle` writes (and what `files` in package.json publishes). */
const BUNDLE_DIR = join(PACKAGE_DIR, 'bundle');

const require = createRequire(import.meta.url);
/** The Node-version launcher (plain JavaScript), bundled into each command's small entry file. */
const LAUNCH = require.resolve('@qontract/core/launch');
// The `src/` directories of the packages whose commands ship (their export `.` is `src/index.ts`).
const CLI_SRC = dirname(require.resolve('@qontract/cli'));
const BUNDLE_TOOL_SRC = dirname(require.resolve('@qontract/bundle'));

/** The commands: the module whose default export runs each one. */
const COMMANDS: Readonly<Record<string, string>> = {
  'qontract-reconcile': join(CLI_SRC, 'bin-qontract-reconcile.ts'),
  'run-integration': join(CLI_SRC, 'bin-run-integration.ts'),
  'qontract-bundle': join(BUNDLE_TOOL_SRC, 'main.ts'),
};

/** `launcher:<command>`: the launcher entry of a command, as its bin file in the sources. */
const launchers: Plugin = {
  name: 'launchers',
  setup(b) {
    b.onResolve({ filter: /^launcher:/ }, (args) => ({ path: args.path, namespace: 'launcher' }));
    b.onLoad({ filter: /.*/, namespace: 'launcher' }, (args) => {
      const command = args.path.slice('launcher:'.length);
      return {
        loader: 'js',
        resolveDir: PACKAGE_DIR,
        contents: [
          SHEBANG,
          "import { fileURLToPath } from 'node:url';",
          `import { launch } from ${JSON.stringify(LAUNCH)};`,
          `await launch(fileURLToPath(new URL('./${command}.main.mjs', import.meta.url)), 'default', ${JSON.stringify(command)});`,
        ].join('\n'),
      };
    });
  },
};

/** Builds the bundle into `outdir` (default `bundle/`, emptied first); returns the files written. */
export async function buildBundle(outdir = BUNDLE_DIR): Promise<string[]> {
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: Object.entries(COMMANDS).flatMap(([command, main]) => [
      { in: `launcher:${command}`, out: command },
      { in: main, out: `${command}.main` },
    ]),
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22.12',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    // CommonJS dependencies call require() for Node built-ins; an ES module has none.
    banner: {
      js: "import { createRequire as __qrCreateRequire } from 'node:module'; const require = __qrCreateRequire(import.meta.url);",
    },
    plugins: [launchers],
  });
  return Object.keys(result.metafile.outputs).sort();
}

if (import.meta.main) {
  const files = await buildBundle();
  process.stdout.write(`${files.length} files written to ${BUNDLE_DIR}\n`);
}
