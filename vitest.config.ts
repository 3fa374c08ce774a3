import { defineConfig } from 'vitest/config';

// Two projects: pure domain and engine tests run without any service; integration tests
// share one Temporal dev server and one fresh PostgreSQL database per run.
export default defineConfig({
  test: {
    // The last line of a run is "vitest: N passed, N failed, N skipped" (see the reporter).
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    projects: [
      {
        test: {
          name: 'domain',
          include: ['test/domain/**/*.test.ts', 'test/engine/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
