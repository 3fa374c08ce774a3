import type { Reporter, TestModule } from 'vitest/node';

// CI reads a run's last line to tell a run that tested something from one
// that tested nothing, and knows vitest's own summary by no rule of its
// own: it reads the plain "N passed, N failed, N skipped" line in any
// language. This reporter prints that line after vitest's summary.
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const testModule of testModules) {
      let tests = 0;
      for (const test of testModule.children.allTests()) {
        tests += 1;
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed to load has no tests to count, and must not read as a pass.
      if (tests === 0 && testModule.state() === 'failed') failed += 1;
    }
    process.stdout.write(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
