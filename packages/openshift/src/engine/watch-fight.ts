/** When an object keeps being changed back after our fixes. */
export interface FightPolicy {
  /** This many fixes of one object within `windowMs` make a fight. */
  readonly threshold: number;
  readonly windowMs: number;
  /** The first wait of a fight, doubled with every further fix, up to `maxBackoffMs`. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

export const DEFAULT_FIGHT: FightPolicy = {
  threshold: 3,
  windowMs: 60_000,
  backoffMs: 1_000,
  maxBackoffMs: 300_000,
};

/** What one fix told about the fight over an object. */
export interface FixCount {
  /** Our fixes of the object within the window, this one included. */
  readonly fixes: number;
  /** The fix that made this a fight: report it (once per fight). */
  readonly report: boolean;
}

/**
 * The fight accounting of one object watch mode fixes: its fixes within the
 * window; from the threshold on, each fix waits longer before the next
 * reaction (doubled up to the maximum); a fight is reported once, and a
 * window without fixes ends it (the next fight is reported again).
 */
export class FightRecord {
  readonly #policy: FightPolicy;
  #fixes: number[] = [];
  #reported = false;
  /** No reaction to the object before this time (`performance.now()` clock). */
  backoffUntil = 0;

  constructor(policy: FightPolicy) {
    this.#policy = policy;
  }

  /** Counts a fix made at `now`. */
  fixed(now: number): FixCount {
    const { threshold, windowMs, backoffMs, maxBackoffMs } = this.#policy;
    this.#fixes = this.#fixes.filter((t) => now - t < windowMs);
    if (this.#fixes.length === 0) this.#reported = false;
    this.#fixes.push(now);
    const fixes = this.#fixes.length;
    const beyond = fixes - threshold;
    if (beyond < 0) return { fixes, report: false };
    this.backoffUntil = now + Math.min(maxBackoffMs, backoffMs * 2 ** beyond);
    const report = !this.#reported;
    this.#reported = true;
    return { fixes, report };
  }
}
