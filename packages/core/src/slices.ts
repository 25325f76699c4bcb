/**
 * Lets the event loop run between slices of a long loop of synchronous work.
 *
 * A loop whose steps only await values that are already there (a warm run's
 * desired objects, every one a cache hit) runs as one chain of microtasks: no
 * timer, socket or worker message is handled until it ends. While it runs, the
 * requests other parts of the run have started (the clusters' lists) are not
 * sent and their answers are not read. Awaiting `due()` after each step hands
 * the thread to the event loop once per `sliceMs` of work, so that the
 * round trips overlap the work instead of following it.
 */
export class EventLoopSlices {
  readonly #sliceMs: number;
  #start = performance.now();
  #pause: Promise<void> | undefined;

  /**
   * 4 ms by default: the pages of one list follow one another (each request
   * carries the previous page's `continue` token), so a page that waits for
   * a slice to end holds up every later page of its list; a turn of the event
   * loop costs microseconds.
   */
  constructor(sliceMs = 4) {
    this.#sliceMs = sliceMs;
  }

  /**
   * A promise to await when the current slice has used its time (one for
   * every caller until the event loop has run), else undefined: a step that
   * need not pause costs no microtask.
   */
  due(): Promise<void> | undefined {
    if (this.#pause) return this.#pause;
    if (performance.now() - this.#start < this.#sliceMs) return undefined;
    this.#pause = new Promise<void>((resolve) =>
      setImmediate(() => {
        this.#pause = undefined;
        this.#start = performance.now();
        resolve();
      }),
    );
    return this.#pause;
  }
}
