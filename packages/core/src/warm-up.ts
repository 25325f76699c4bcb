/**
 * Work a library may start as soon as an integration's own run begins, so that
 * it overlaps the run's first round trips instead of following them: loading
 * a large dependency a run is about to use (the Kubernetes client takes about
 * a second to import), while the run waits for app-interface's answer.
 * Libraries register at load time; the runner starts every registered
 * warm-up once per run, after the early-exit decision (a dry-run that exits
 * early needs none of it), never for `--help` or a config error. A warm-up
 * must be idempotent, cheap to start and must not fail the run: what it
 * starts is awaited, and its errors surface, where it is used.
 */
const warmUps = new Set<() => void>();

export function warmUpWhenRunStarts(start: () => void): void {
  warmUps.add(start);
}

/** Starts the registered warm-ups (the runner, when an integration's run begins). */
export function startRunWarmUps(): void {
  for (const start of warmUps) {
    try {
      start();
    } catch {
      // A warm-up only saves time; the work it would have started is done where it is used.
    }
  }
}
