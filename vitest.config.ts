import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // node-pty is a native addon: run each test file in its own forked process.
    pool: 'forks',
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
  },
});
