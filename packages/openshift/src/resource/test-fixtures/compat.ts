import { existsSync } from 'node:fs';

/**
 * The reference vectors of the steering repository (`../shared/compat` beside
 * the checkout, where CI puts the full acceptance set), or the copy of the
 * sample kept here when the checkout has no `shared/` beside it.
 */
export function compatVectors(file: string): URL {
  const shared = new URL(`../../../../../../shared/compat/${file}`, import.meta.url);
  return existsSync(shared) ? shared : new URL(`./compat/${file}`, import.meta.url);
}
