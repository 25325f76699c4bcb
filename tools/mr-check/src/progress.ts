interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export type ProgressState = 'waiting' | 'running' | 'no changes' | 'changes' | 'failed';

interface Line {
  state: ProgressState;
  detail: string;
  started: number | null;
  finished: number | null;
}

/**
 * Progress of the integrations' runs: on a terminal, one line per
 * integration redrawn in place (state and elapsed time); otherwise a plain
 * log line per start and per end, fit for CI logs.
 */
export class Progress {
  readonly #out: Output;
  readonly #tty: boolean;
  readonly #lines = new Map<string, Line>();
  readonly #now: () => number;
  #drawn = 0;
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(out: Output, options: { tty?: boolean; now?: () => number } = {}) {
    this.#out = out;
    this.#tty = options.tty ?? out.isTTY === true;
    this.#now = options.now ?? (() => performance.now());
  }

  start(names: readonly string[]): void {
    for (const name of names) {
      this.#lines.set(name, { state: 'waiting', detail: '', started: null, finished: null });
    }
    if (this.#tty && names.length > 0) {
      this.#draw();
      this.#timer = setInterval(() => this.#draw(), 500);
      this.#timer.unref();
    }
  }

  update(name: string, state: ProgressState, detail = ''): void {
    const line = this.#lines.get(name);
    if (!line) return;
    line.state = state;
    line.detail = detail;
    if (state === 'running') line.started = this.#now();
    else if (state !== 'waiting') line.finished = this.#now();
    if (this.#tty) this.#draw();
    else this.#out.write(`${name}: ${this.#describe(line)}\n`);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#tty && this.#lines.size > 0) this.#draw();
  }

  #describe(line: Line): string {
    const end = line.finished ?? this.#now();
    // A plain log line of a start carries no time; a live line shows it growing.
    const timed = line.started !== null && (this.#tty || line.finished !== null);
    const elapsed = timed ? ` ${((end - (line.started ?? end)) / 1000).toFixed(1)}s` : '';
    return `${line.state}${line.detail ? ` (${line.detail})` : ''}${elapsed}`;
  }

  #draw(): void {
    const width = Math.max(...[...this.#lines.keys()].map((n) => n.length));
    let text = this.#drawn > 0 ? `\x1b[${this.#drawn}A` : '';
    for (const [name, line] of this.#lines) {
      text += `\x1b[2K  ${name.padEnd(width)}  ${this.#describe(line)}\n`;
    }
    this.#drawn = this.#lines.size;
    this.#out.write(text);
  }
}
