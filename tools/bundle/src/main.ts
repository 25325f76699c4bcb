import { stat } from 'node:fs/promises';
import {
  type AppInterfaceLayout,
  BundleLoadError,
  type BundleProblem,
  collectBundleFromDirectory,
  compareProblems,
  formatProblem,
  loadEmbeddedEngine,
  readBundleFile,
  serializeBundle,
  startBundleServer,
  validateBundle,
  writeBundleFile,
} from '@qontract/app-interface';
import { ExitCode, runTool, UsageError } from '@qontract/core';

interface Output {
  write(text: string): unknown;
}

export interface MainOptions {
  stdout?: Output;
  stderr?: Output;
  /** Stops `serve`; by default SIGINT/SIGTERM do. */
  signal?: AbortSignal;
  /** Called once `serve` listens (tests use it to learn the URL). */
  onListening?: (url: string) => void;
}

const USAGE = `Usage:
  qontract-bundle build DIR [-o bundle.json] [--data DIR] [--resources DIR] [--schemas DIR]
                            [--graphql-schema FILE] [--no-git]
  qontract-bundle validate DIR|bundle.json [--json]
  qontract-bundle serve bundle.json|DIR [bundle.json|DIR...] [--port N] [--host HOST]
                        [--no-validate]

DIR is an app-interface tree: data/, resources/, graphql-schemas/schema.yml and
optionally schemas/ (JSON schemas). The --data/--resources/--schemas/--graphql-schema
options point elsewhere, e.g. at a qontract-schemas checkout.
`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  data: { type: 'string' },
  resources: { type: 'string' },
  schemas: { type: 'string' },
  'graphql-schema': { type: 'string' },
  'no-git': { type: 'boolean' },
  'no-validate': { type: 'boolean' },
  json: { type: 'boolean' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A usage error of this tool: the message, then USAGE. */
const usageError = (message: string) => new UsageError(message, USAGE);

/** Runs one `qontract-bundle` command and returns its exit code. */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  return runTool(
    argv,
    { options: OPTIONS, allowPositionals: true },
    USAGE,
    { stdout, stderr },
    async ({ values, positionals }) => {
      const [command, source, ...extra] = positionals;
      if (!command) throw usageError('missing command');
      if (!source) throw usageError(`${command}: missing DIR or bundle.json`);
      if (extra.length > 0 && command !== 'serve') {
        throw usageError(`unexpected arguments: ${extra.join(' ')}`);
      }
      const layout: Partial<AppInterfaceLayout> = {
        ...(values.data ? { dataDir: values.data } : {}),
        ...(values.resources ? { resourcesDir: values.resources } : {}),
        ...(values.schemas ? { schemasDir: values.schemas } : {}),
        ...(values['graphql-schema'] ? { graphqlSchemaFile: values['graphql-schema'] } : {}),
      };
      const git = !values['no-git'];
      switch (command) {
        case 'build':
          return await build(source, values.output, { layout, git }, stdout, stderr);
        case 'validate':
          return await validate(source, { layout, git }, values.json === true, stdout);
        case 'serve':
          return await serve([source, ...extra], values, { layout, git }, stdout, options);
        default:
          throw usageError(`unknown command '${command}'`);
      }
    },
  );
}

interface SourceOptions {
  layout: Partial<AppInterfaceLayout>;
  git: boolean;
}

async function build(
  dir: string,
  output: string | undefined,
  opts: SourceOptions,
  stdout: Output,
  stderr: Output,
): Promise<number> {
  // Like qontract-bundler: only what stops a bundle from being written fails the build.
  const { bundle, problems } = await collectBundleFromDirectory(dir, opts);
  if (problems.length > 0) throw new BundleLoadError(dir, problems);
  const written = output ? await writeBundleFile(output, bundle) : serializeBundle(bundle);
  if (!output) stdout.write(written.text);
  stderr.write(
    `bundle ${written.sha256}: ${Object.keys(bundle.data).length} data files, ` +
      `${Object.keys(bundle.resources).length} resources, ${Object.keys(bundle.schemas).length} schemas` +
      `${output ? ` -> ${output}` : ''}\n`,
  );
  return ExitCode.SUCCESS;
}

async function validate(
  source: string,
  opts: SourceOptions,
  json: boolean,
  stdout: Output,
): Promise<number> {
  const isDir = await stat(source).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const problems: BundleProblem[] = [];
  let counts = '';
  if (isDir) {
    const collected = await collectBundleFromDirectory(source, opts);
    // A reference to a file that did not parse then says so, not "does not exist".
    problems.push(...collected.problems, ...validateBundle(collected.bundle, collected.unloaded));
    counts = `${Object.keys(collected.bundle.data).length} data files`;
  } else {
    const { bundle } = await readBundleFile(source).catch((e: unknown) => {
      if (e instanceof Error && 'code' in e && e.code === 'ENOENT') {
        throw new BundleLoadError(source, [
          { file: source, reason: 'no such file or directory', kind: 'FILE' },
        ]);
      }
      throw e;
    });
    problems.push(...validateBundle(bundle));
    counts = `${Object.keys(bundle.data).length} data files`;
  }
  problems.sort(compareProblems);
  if (json) {
    stdout.write(`${JSON.stringify(problems, null, 2)}\n`);
  } else if (problems.length === 0) {
    stdout.write(`OK: ${counts}, no problems\n`);
  } else {
    for (const p of problems) stdout.write(`ERROR ${p.kind} ${formatProblem(p)}\n`);
    stdout.write(`${problems.length} problem${problems.length === 1 ? '' : 's'} found\n`);
  }
  return problems.length === 0 ? ExitCode.SUCCESS : ExitCode.ERROR;
}

async function serve(
  sources: readonly string[],
  values: {
    port?: string | undefined;
    host?: string | undefined;
    'no-validate'?: boolean | undefined;
  },
  opts: SourceOptions,
  stdout: Output,
  options: MainOptions,
): Promise<number> {
  const port = values.port === undefined ? 4000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw usageError(`--port must be an integer between 0 and 65535, got '${values.port}'`);
  }
  // Like qontract-server after loading several bundles: each answers by its
  // sha, the last one is the current bundle, and /diff compares any two.
  const engines = [];
  for (const source of sources) {
    engines.push(
      await loadEmbeddedEngine(source, {
        ...opts,
        ...(values['no-validate'] ? { validate: false } : {}),
      }),
    );
  }
  const server = await startBundleServer(engines, { port, host: values.host ?? '127.0.0.1' });
  for (const engine of engines.slice(0, -1)) stdout.write(`loaded bundle ${engine.sha256}\n`);
  const current = engines.at(-1)!;
  stdout.write(`serving bundle ${current.sha256} on ${server.url} (port ${server.port})\n`);
  options.onListening?.(server.url);
  await new Promise<void>((resolve) => {
    if (options.signal) {
      if (options.signal.aborted) resolve();
      options.signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
  return ExitCode.SUCCESS;
}

/** @public Entry point of `bin/qontract-bundle.js` (loaded through the Node-version launcher). */
export default async function run(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
