/**
 * The comparison itself, on the two runs' output text: which action lines
 * each printed, and what differs. Pure.
 */

/**
 * A log line of either CLI in text format: the original's
 * `[time] [LEVEL] [DRY-RUN] [file.py:function:line] - message`, ours
 * `[time] [LEVEL] [DRY-RUN] [integration] - message`.
 */
const LOG_LINE = /^\[[^\]]*\] \[[A-Z]+\] (?:\[DRY-RUN\] )?\[[^\]]*\] - (.*)$/;

const PY_ITEM = String.raw`(?:'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*"|True|False|None|-?\d+)`;
/**
 * An action message: the Python repr of a list whose first item names the
 * action (`['apply', 'privileged=False', cluster, namespace, kind, name]`,
 * `['delete', ...]`, `['create', ...]`, ...), as the original logs each one.
 */
const ACTION = new RegExp(String.raw`^\['[a-z_]+'(?:, ${PY_ITEM})*\]$`);

/** The action messages of a run's output (stdout and stderr alike), in order. */
export function actionLines(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split(/\r?\n/)) {
    const message = LOG_LINE.exec(line)?.[1]?.trimEnd();
    if (message && ACTION.test(message)) out.push(message);
  }
  return out;
}

/** One run of a CLI: its exit code and its action lines. */
export interface RunOutcome {
  readonly exitCode: number;
  readonly actions: readonly string[];
  /** Why the process did not run at all. */
  readonly error?: string;
}

/** What differs between the original's run and ours of one integration. */
export interface IntegrationComparison {
  /** The integration and its arguments, as given. */
  readonly integration: string;
  readonly original: RunOutcome;
  readonly ours: RunOutcome;
  /** Action lines the original printed and ours did not (as many times as they are missing). */
  readonly onlyOriginal: readonly string[];
  readonly onlyOurs: readonly string[];
  readonly identical: boolean;
}

/**
 * Compares two runs' action lines as multisets: the original logs the
 * actions of a run from a thread pool, so their order is not stable, only
 * which lines (and how many of each) are printed. Exit codes must match too.
 */
export function compareRuns(
  integration: string,
  original: RunOutcome,
  ours: RunOutcome,
): IntegrationComparison {
  const onlyOriginal = without(original.actions, ours.actions);
  const onlyOurs = without(ours.actions, original.actions);
  return {
    integration,
    original,
    ours,
    onlyOriginal,
    onlyOurs,
    identical:
      onlyOriginal.length === 0 && onlyOurs.length === 0 && original.exitCode === ours.exitCode,
  };
}

/** `a` minus `b`, counting repeats, sorted. */
function without(a: readonly string[], b: readonly string[]): string[] {
  const left = new Map<string, number>();
  for (const line of b) left.set(line, (left.get(line) ?? 0) + 1);
  const out: string[] = [];
  for (const line of a) {
    const n = left.get(line) ?? 0;
    if (n > 0) left.set(line, n - 1);
    else out.push(line);
  }
  return out.sort();
}

/** The report of every integration compared, as text: each difference on a line of its own. */
export function renderReport(comparisons: readonly IntegrationComparison[]): string {
  const lines: string[] = [];
  for (const c of comparisons) {
    if (c.identical) {
      lines.push(`${c.integration}: identical (${c.ours.actions.length} action line(s))`);
      continue;
    }
    lines.push(`${c.integration}: DIFFERENT`);
    for (const e of [c.original.error, c.ours.error]) if (e) lines.push(`  ${e}`);
    if (c.original.exitCode !== c.ours.exitCode) {
      lines.push(`  exit code: original ${c.original.exitCode}, ours ${c.ours.exitCode}`);
    }
    for (const l of c.onlyOriginal) lines.push(`  only in the original: ${l}`);
    for (const l of c.onlyOurs) lines.push(`  only in ours:         ${l}`);
  }
  const different = comparisons.filter((c) => !c.identical).length;
  lines.push(
    different === 0
      ? `${comparisons.length} integration(s) compared: the plans are identical`
      : `${comparisons.length} integration(s) compared: ${different} differ`,
  );
  return `${lines.join('\n')}\n`;
}
