import { defineConfig } from 'vitest/config';

// Two projects: `unit` (files named *.unit.test.ts: pure code, no process started — the
// setup refuses one) is the fast inner loop, `npm run test:unit`; `integration` is every
// other test (real git, real processes, the bundle, tmux, the agent CLIs). `vitest run`
// runs both.
export default defineConfig({
  test: {
    // node-pty is a native addon: run each test file in its own forked process.
    pool: 'forks',
    testTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.unit.test.ts', 'test/**/*.unit.test.tsx'],
          setupFiles: ['test/helpers/no-processes.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: ['test/**/*.unit.test.ts', 'test/**/*.unit.test.tsx'],
        },
      },
    ],
  },
});
