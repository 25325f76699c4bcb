import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// One vitest run covers every workspace project. Projects are listed here
// (not by glob) so that they inherit the settings below (`extends: true`).
const projects = ['packages', 'integrations', 'tools'].flatMap((group) =>
  readdirSync(group, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(group, d.name, 'package.json')))
    .map((d) => {
      const root = join(group, d.name);
      const { name } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        name: string;
      };
      return { extends: true as const, test: { name, root } };
    }),
);

export default defineConfig({
  test: {
    projects,
    // End-to-end tests drive real HTTP servers on a 2-core machine that runs
    // several test files at once; the default 5 s is too tight under load.
    // Timings are asserted in benchmarks, never in tests.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report feeds the totals line of .ci/run.
    reporters: ['default', 'json'],
    outputFile: { json: '.ci/out/vitest-report.json' },
  },
});
