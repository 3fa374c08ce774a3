import { defineConfig } from 'vitest/config';

// npm run test:abuse: hostile but authorised clients against the real
// service (PostgreSQL, a Temporal dev server, a worker and the API, as the
// integration tests build them), one file per kind of abuse. Each asserts
// outcomes (refused, cut, completed, nothing lost), never timings, and that
// an ordinary client's requests meanwhile all succeeded.
export default defineConfig({
  test: {
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    include: ['test/abuse/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
