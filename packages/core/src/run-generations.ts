/**
 * The runs under way of a cache that lives as long as the process and keeps,
 * between the runs of a loop, only what the runs used. Runs may overlap (the
 * shards of one process), so entries are dropped only once the last run under
 * way has ended, and then only those that no run since the previous drop used.
 * Each entry records the number of the last run that used it.
 */
export class RunGenerations {
  /** The number of the last run begun. */
  #run = 0;
  readonly #active = new Set<number>();
  /** The first run since the last drop: what any run since used stays. */
  #epoch = 1;

  /** A new run: its number, for the entries it uses. */
  begin(): number {
    const run = ++this.#run;
    this.#active.add(run);
    return run;
  }

  /**
   * Ends `run`. When no run is under way any more, `drop(epoch)` is called:
   * the entries last used by a run numbered below `epoch` must go. Ending a
   * run twice does nothing.
   */
  end(run: number, drop: (epoch: number) => void): void {
    if (!this.#active.delete(run)) return;
    if (this.#active.size > 0) return;
    drop(this.#epoch);
    this.#epoch = this.#run + 1;
  }
}
