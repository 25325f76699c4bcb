import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { ExampleEnvironment } from '@qontract/testing';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { runQontractReconcile } from '../e2e/harness.ts';

// The bad-input corpus: every way an app-interface merge request can break
// its data, one TOML file per case under ./bad-input/cases. This module reads
// a case, applies it to a copy of the example tree and runs the command it
// names; the test asserts what the case expects.

const CASES_DIR = resolve(import.meta.dirname, 'bad-input/cases');
const REPO = resolve(import.meta.dirname, '../../../..');
const BINS: Record<string, string> = {
  'qontract-bundle': join(REPO, 'tools/bundle/bin/qontract-bundle.js'),
  'qontract-mr-check': join(REPO, 'tools/mr-check/bin/qontract-mr-check.js'),
};

/** A file the case writes (relative to the app-interface root), or `false` to remove it. */
type FileContent =
  | string
  | false
  | { base64: string }
  | { repeat: string; times: number; before?: string; after?: string };

interface Edit {
  readonly file: string;
  readonly replace?: string;
  readonly with?: string;
  readonly append?: string;
}

export interface BadInputCase {
  readonly name: string;
  readonly about: string;
  /** The command line: `qontract-reconcile ...`, `qontract-bundle validate` or `qontract-mr-check`. */
  readonly run: readonly string[];
  readonly exit: number;
  /** Patterns (JavaScript regexes) the error output must contain; at least one names the file. */
  readonly errors: readonly string[];
  /** Patterns the whole output must contain (what an accepted oddity turned into). */
  readonly output: readonly string[];
  /** Patterns the output must not contain. */
  readonly absent: readonly string[];
  readonly files: Readonly<Record<string, FileContent>>;
  readonly edits: readonly Edit[];
}

export interface CaseRun {
  readonly code: number;
  /** Everything the command wrote (stdout and stderr). */
  readonly output: string;
  /** What a reader is shown as the error: error log messages, or the whole output of the tools. */
  readonly errorText: string;
  /** The destructive action lines a qontract-reconcile run logged (`['delete', ...]`). */
  readonly deletions: readonly string[];
  /** How many destructive actions the run held back because of an error. */
  readonly disabled: number;
}

export async function loadCases(): Promise<BadInputCase[]> {
  const names = (await readdir(CASES_DIR)).filter((n) => n.endsWith('.toml')).sort();
  return Promise.all(
    names.map(async (n) => parseCase(n, await readFile(join(CASES_DIR, n), 'utf8'))),
  );
}

function parseCase(fileName: string, text: string): BadInputCase {
  const raw = parseToml(text) as Record<string, unknown>;
  const fail = (what: string): never => {
    throw new Error(`bad-input case ${fileName}: ${what}`);
  };
  const strings = (v: unknown, key: string): string[] =>
    v === undefined
      ? []
      : Array.isArray(v) && v.every((s) => typeof s === 'string')
        ? v
        : fail(`${key} must be a list of strings`);
  if (typeof raw.about !== 'string') fail('about (one line: what is broken) is required');
  const run = strings(raw.run, 'run');
  if (!run[0] || !['qontract-reconcile', ...Object.keys(BINS)].includes(run[0])) {
    fail(`run must start with qontract-reconcile, ${Object.keys(BINS).join(' or ')}`);
  }
  if (typeof raw.exit !== 'number') fail('exit (the expected exit code) is required');
  const errors = strings(raw.errors, 'errors');
  if (raw.exit !== 0 && errors.length === 0) fail('errors must say what the error names');
  const files = (raw.files ?? {}) as Record<string, FileContent>;
  for (const [path, content] of Object.entries(files)) {
    const ok =
      typeof content === 'string' ||
      content === false ||
      (typeof content === 'object' &&
        ('base64' in content || ('repeat' in content && 'times' in content)));
    if (!ok) {
      fail(`files."${path}" must be a string, false, {base64} or {repeat, times, before?, after?}`);
    }
  }
  const edits = (raw.edits ?? []) as Edit[];
  for (const e of edits) {
    if (typeof e.file !== 'string') fail('every edit needs a file');
    if (e.append === undefined && (e.replace === undefined || e.with === undefined)) {
      fail(`edit of ${e.file} needs append, or replace and with`);
    }
  }
  return {
    name: fileName.replace(/\.toml$/, ''),
    about: raw.about as string,
    run,
    exit: raw.exit as number,
    errors,
    output: strings(raw.output, 'output'),
    absent: strings(raw.absent, 'absent'),
    files,
    edits,
  };
}

/** Copies the environment's app-interface tree to DIR and applies the case to the copy. */
export async function applyCase(c: BadInputCase, env: ExampleEnvironment, dir: string) {
  await cp(env.appInterfaceDir, dir, { recursive: true });
  for (const [path, content] of Object.entries(c.files)) {
    const target = join(dir, path);
    if (content === false) {
      await rm(target, { force: true });
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(
      target,
      typeof content === 'string'
        ? content
        : 'base64' in content
          ? Buffer.from(content.base64, 'base64')
          : (content.before ?? '') + content.repeat.repeat(content.times) + (content.after ?? ''),
    );
  }
  for (const e of c.edits) {
    const target = join(dir, e.file);
    const text = await readFile(target, 'utf8');
    if (e.append !== undefined) {
      await writeFile(target, text + e.append);
    } else {
      if (!text.includes(e.replace!)) {
        throw new Error(`bad-input case ${c.name}: ${e.file} does not contain ${e.replace}`);
      }
      await writeFile(target, text.replace(e.replace!, e.with!));
    }
  }
}

/** A config.toml like the environment's, its `[graphql]` pointing at TREE. */
export async function configFor(env: ExampleEnvironment, tree: string, path: string) {
  const config = parseToml(await readFile(env.configPath, 'utf8')) as Record<string, unknown>;
  config.graphql = { ...(config.graphql as object), server: `file://${tree}` };
  await writeFile(path, stringifyToml(config));
}

/** Runs the case's command against TREE (the broken copy) with CONFIG. */
export async function runCase(
  c: BadInputCase,
  env: ExampleEnvironment,
  tree: string,
  config: string,
): Promise<CaseRun> {
  const [program, ...args] = c.run;
  if (program === 'qontract-reconcile') {
    // In-process, as the e2e tests run it: a process per case would cost seconds.
    const run = await runQontractReconcile(['--config', config, ...args]);
    const errorRecords = run.logs.filter((l) => l.level >= 50);
    return {
      code: run.code,
      output: run.stdout + run.stderr,
      errorText: [
        ...errorRecords.map((l) => l.msg),
        ...run.stderr.split('\n').filter((l) => l && !l.startsWith('{')),
      ].join('\n'),
      deletions: run.logs.map((l) => l.msg).filter((m) => /^\['(delete|del_)/.test(m)),
      // "'delete' action is disabled due to previous errors (N held back)." once per action name.
      disabled: run.logs
        .map((l) =>
          /^'\w+' action is disabled due to previous errors \((\d+) held back\)/.exec(l.msg),
        )
        .reduce((sum, m) => sum + (m ? Number(m[1]) : 0), 0),
    };
  }
  const argv =
    program === 'qontract-bundle'
      ? [...args, tree]
      : [...args, '--base', env.appInterfaceDir, '--head', tree, '--config', config];
  // The tools are beside the CLI, not below it: they run as the user runs them.
  const { code, stdout, stderr } = await new Promise<{
    code: number;
    stdout: string;
    stderr: string;
  }>((done) => {
    execFile(process.execPath, [BINS[program!]!, ...argv], (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
  return { code, output: stdout + stderr, errorText: stdout + stderr, deletions: [], disabled: 0 };
}
