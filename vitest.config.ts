import { defineConfig } from 'vitest/config';

// One vitest run covers every workspace project; each project may add its own
// vitest.config.ts, otherwise the defaults below apply.
export default defineConfig({
  test: {
    projects: ['packages/*', 'integrations/*', 'tools/*'],
  },
});
