import { seededRandom } from '@qontract/fake-kube-apiserver';
/**
 * Which objects a drift scenario changes on the cluster: a seeded,
 * reproducible choice of exactly round(fraction × total) of them, half
 * edited in place (the stored sha no longer matches the body) and half
 * deleted (the engine must create them again).
 */
export interface DriftChoice {
  readonly changed: ReadonlySet<number>;
  readonly missing: ReadonlySet<number>;
}

export function chooseDrift(total: number, fraction: number, seed: number): DriftChoice {
  const count = Math.round(total * fraction);
  const random = seededRandom(seed);
  // Partial Fisher–Yates over the indices: the first `count` slots are the sample.
  const indices = Array.from({ length: total }, (_, i) => i);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (total - i));
    [indices[i], indices[j]] = [indices[j]!, indices[i]!];
  }
  const changed = new Set<number>();
  const missing = new Set<number>();
  for (let i = 0; i < count; i++) (i % 2 === 0 ? changed : missing).add(indices[i]!);
  return { changed, missing };
}

export const NO_DRIFT: DriftChoice = { changed: new Set(), missing: new Set() };
