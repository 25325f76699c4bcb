import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgsStringToArgv } from 'string-argv';
import {
  actionLines,
  compareRuns,
  type IntegrationComparison,
  type RunOutcome,
} from './compare.ts';

const require = createRequire(import.meta.url);

/** This workspace's `qontract-reconcile` (run under the current node): "ours" by default. */
const OUR_CLI = [
  process.execPath,
  join(dirname(require.resolve('@qontract/cli/package.json')), 'bin/qontract-reconcile.js'),
];

export interface ShadowCompareSettings {
  /** The original's command line up to its options (`qontract-reconcile`, `podman run ... IMAGE qontract-reconcile`). */
  readonly original: string;
  /** Our command line; default this workspace's `qontract-reconcile`. */
  readonly ours?: string | undefined;
  /** The config.toml, as ours reads it. */
  readonly configPath: string;
  /** The same file as the original's process sees it (a path inside its container); default `configPath`. */
  readonly originalConfigPath?: string | undefined;
  /** Each integration with its own arguments (`openshift-resources --cluster-name c1`). */
  readonly integrations: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Dry-runs each integration with both CLIs, on the same config (and so the
 * same app-interface and clusters), both at once, one integration after the
 * other, and compares their action lines.
 */
export async function shadowCompare(s: ShadowCompareSettings): Promise<IntegrationComparison[]> {
  const original = parseArgsStringToArgv(s.original);
  const ours = s.ours ? parseArgsStringToArgv(s.ours) : OUR_CLI;
  const out: IntegrationComparison[] = [];
  for (const integration of s.integrations) {
    const args = parseArgsStringToArgv(integration);
    const [theirs, mine] = await Promise.all([
      runCli(
        [...original, '--config', s.originalConfigPath ?? s.configPath, '--dry-run', ...args],
        s,
      ),
      // Ours logs JSON when not on a terminal: the text format is the original's.
      runCli([...ours, '--config', s.configPath, '--dry-run', '--log-format', 'text', ...args], s),
    ]);
    out.push(compareRuns(integration, theirs, mine));
  }
  return out;
}

/** One run to its end: exit code (127 when it cannot start) and the action lines of its output. */
function runCli(
  argv: readonly string[],
  s: Pick<ShadowCompareSettings, 'env' | 'signal'>,
): Promise<RunOutcome> {
  return new Promise((done) => {
    const [command, ...args] = argv;
    const child = spawn(command!, args, {
      env: { ...s.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(s.signal ? { signal: s.signal } : {}),
    });
    // Each stream on its own: chunks of the two would cut each other's lines.
    const text = { out: '', err: '' };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (text.out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (text.err += d));
    let failure: string | undefined;
    child.on('error', (e) => {
      failure = `cannot run ${command}: ${e.message}`;
    });
    child.on('close', (code, signal) =>
      done({
        exitCode: failure ? 127 : (code ?? (signal ? 128 : 1)),
        actions: [...actionLines(text.out), ...actionLines(text.err)],
        ...(failure ? { error: failure } : {}),
      }),
    );
  });
}
