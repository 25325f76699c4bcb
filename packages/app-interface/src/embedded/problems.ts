import { QontractError } from '@qontract/core';
import { compareCodePoints } from '@qontract/pycompat';

/** One thing wrong with an app-interface tree or bundle: which file, and why. */
export interface BundleProblem {
  /** Bundle-style key (`/services/a/ns.yml`), or the path as given for files outside `data/`. */
  readonly file: string;
  readonly reason: string;
  /** Validator-style category, so reports can be grouped like qontract-validator's. */
  readonly kind: ProblemKind;
  /**
   * Other problems follow from this one: a data file naming a `$schema` that
   * does not exist fails every `$schemaRef` that points at it. Listed first,
   * so the cause is read before its consequences.
   */
  readonly rootCause?: true;
}

/** Root causes first, then by file; the sort is stable, so one file's problems keep their order. */
export function compareProblems(a: BundleProblem, b: BundleProblem): number {
  if (Boolean(a.rootCause) !== Boolean(b.rootCause)) return a.rootCause ? -1 : 1;
  return compareCodePoints(a.file, b.file);
}

export const ProblemKind = {
  PARSE: 'PARSE',
  SCHEMA: 'SCHEMA',
  FILE: 'FILE',
  REF: 'REF',
  UNIQUE: 'UNIQUE',
  GRAPHQL: 'GRAPHQL',
} as const;
export type ProblemKind = (typeof ProblemKind)[keyof typeof ProblemKind];

export function formatProblem(p: BundleProblem): string {
  return `${p.file}: ${p.reason}`;
}

/**
 * Loading or validating found problems. All of them are collected before this
 * is thrown, so one run shows everything that has to be fixed.
 */
export class BundleLoadError extends QontractError {
  readonly problems: readonly BundleProblem[];
  constructor(source: string, problems: readonly BundleProblem[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`${source}: ${count}\n${problems.map((p) => `  - ${formatProblem(p)}`).join('\n')}`);
    this.problems = problems;
  }
}
