import { QontractError } from '@qontract/core';

/** One thing wrong with an app-interface tree or bundle: which file, and why. */
export interface BundleProblem {
  /** Bundle-style key (`/services/a/ns.yml`), or the path as given for files outside `data/`. */
  readonly file: string;
  readonly reason: string;
  /** Validator-style category, so reports can be grouped like qontract-validator's. */
  readonly kind: ProblemKind;
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
