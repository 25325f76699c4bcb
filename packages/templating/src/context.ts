import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { failure } from './errors.ts';

/** Caps that keep a hostile or broken template from hanging or exhausting the process. */
export interface RenderLimits {
  /** Characters produced in total (output, captured blocks, nested renders). */
  readonly maxOutputChars: number;
  /** Loop iterations, and the length of lists/ranges a template may build. */
  readonly maxIterations: number;
  /** Nested macro calls and nested template renders (`eval`, helper arguments). */
  readonly maxCallDepth: number;
  /** Wall-clock time for one render, helpers included; stops loops of costly steps. */
  readonly maxRenderMillis: number;
}

export const DEFAULT_LIMITS: RenderLimits = {
  maxOutputChars: 16 * 1024 * 1024,
  maxIterations: 1_000_000,
  maxCallDepth: 100,
  maxRenderMillis: 120_000,
};

/** What one render (including its nested renders) has used so far. */
export class Budget {
  readonly limits: RenderLimits;
  outputChars = 0;
  iterations = 0;
  depth = 0;
  readonly #deadline: number;

  constructor(limits: RenderLimits) {
    this.limits = limits;
    this.#deadline = performance.now() + limits.maxRenderMillis;
  }

  checkTime(): void {
    if (performance.now() > this.#deadline) {
      throw failure.limit(
        `rendering took longer than the limit of ${this.limits.maxRenderMillis} ms`,
      );
    }
  }

  chargeOutput(chars: number): void {
    this.outputChars += chars;
    if (this.outputChars > this.limits.maxOutputChars) {
      throw failure.limit(`output exceeds the limit of ${this.limits.maxOutputChars} characters`);
    }
  }

  chargeIteration(): void {
    this.checkTime();
    if (++this.iterations > this.limits.maxIterations) {
      throw failure.limit(`more than ${this.limits.maxIterations} loop iterations`);
    }
  }

  checkLength(length: number, what: string): void {
    if (length > this.limits.maxIterations) {
      throw failure.limit(`${what} longer than the limit of ${this.limits.maxIterations} items`);
    }
  }

  checkStringLength(length: number): void {
    if (length > this.limits.maxOutputChars) {
      throw failure.limit(
        `string longer than the limit of ${this.limits.maxOutputChars} characters`,
      );
    }
  }

  async nested<T>(fn: () => Promise<T>): Promise<T> {
    this.checkTime();
    if (++this.depth > this.limits.maxCallDepth) {
      this.depth--;
      throw failure.limit(`call depth exceeds the limit of ${this.limits.maxCallDepth}`);
    }
    try {
      return await fn();
    } finally {
      this.depth--;
    }
  }
}

/** What filters and tests may use of the running render. */
export interface FilterContext {
  readonly strict: boolean;
  readonly budget: Budget;
  getAttribute(obj: unknown, name: string): unknown;
  callFilter(
    name: string,
    value: unknown,
    args: unknown[],
    kwargs: Record<string, unknown>,
  ): Promise<unknown>;
  callTest(
    name: string,
    value: unknown,
    args: unknown[],
    kwargs: Record<string, unknown>,
  ): Promise<boolean>;
  hasFilter(name: string): boolean;
  hasTest(name: string): boolean;
  /** Renders `body` as a standard-delimiter template with `variables` (the `eval` filter). */
  renderString(body: string, variables: Record<string, unknown>): Promise<string>;
}

export type FilterFn = (
  ctx: FilterContext,
  value: unknown,
  args: unknown[],
  kwargs: Record<string, unknown>,
) => unknown;

export type TestFn = (
  ctx: FilterContext,
  value: unknown,
  args: unknown[],
  kwargs: Record<string, unknown>,
) => boolean | Promise<boolean>;

/** The filters and tests one template flavour knows. */
export interface Environment {
  readonly filters: Readonly<Record<string, FilterFn>>;
  readonly tests: Readonly<Record<string, TestFn>>;
}

const activeBudget = new AsyncLocalStorage<Budget>();

/** Runs a render with `budget` reachable from value helpers deep in the call tree. */
export function withBudget<T>(budget: Budget, fn: () => Promise<T>): Promise<T> {
  return activeBudget.run(budget, fn);
}

function activeLimits(): RenderLimits {
  return activeBudget.getStore()?.limits ?? DEFAULT_LIMITS;
}

/** Refuses to build a string longer than the output limit (checked before allocating it). */
export function checkStringSize(length: number): void {
  const max = activeLimits().maxOutputChars;
  if (length > max) throw failure.limit(`string longer than the limit of ${max} characters`);
}

/** Refuses to build a list or mapping longer than the iteration limit. */
export function checkCollectionSize(length: number): void {
  const max = activeLimits().maxIterations;
  if (length > max) throw failure.limit(`collection longer than the limit of ${max} items`);
}
