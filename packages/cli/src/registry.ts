import type { AnyIntegration } from '@qontract/core';

/**
 * The static integration registry: every integration the umbrella CLI offers.
 * `npm run new-integration -- NAME` adds a line here; keep the list sorted.
 */
// registry:imports (the generator inserts imports above this line)

export const integrations: readonly AnyIntegration[] = [
  // registry:entries (the generator inserts entries above this line)
];
