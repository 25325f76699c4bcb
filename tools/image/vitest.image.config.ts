import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:image` only (and .ci/run after npm test): the root config's
// projects include `*.test.ts` files, not these checks, which build an image
// (a minute or more, root, apt packages).
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['src/**/*.check.ts'],
    testTimeout: 120_000,
    hookTimeout: 30 * 60_000,
    // The JSON report feeds the totals line of .ci/run, beside npm test's.
    reporters: ['default', 'json'],
    outputFile: { json: resolve(import.meta.dirname, '../../.ci/out/vitest-image-report.json') },
  },
});
