import { defineConfig } from 'vitest/config';

// One vitest run covers every workspace project (each may add its own
// vitest.config.ts). The JSON report feeds the totals line of .ci/run.
export default defineConfig({
  test: {
    projects: ['packages/*', 'integrations/*', 'tools/*'],
    reporters: ['default', 'json'],
    outputFile: { json: '.ci/out/vitest-report.json' },
  },
});
