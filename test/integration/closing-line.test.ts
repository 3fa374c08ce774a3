import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// CI tells a run that tested something from one that tested nothing by its
// last line, which it reads as "N passed, N failed" in any language
// (test/support/closing-line-reporter.ts prints it after vitest's summary).
describe('the closing line of a vitest run', () => {
  it('is "vitest: N passed, N failed, N skipped", last, counting the tests that ran', () => {
    const output = execFileSync('npx', ['vitest', 'run', 'test/domain/batch-revision-lines.test.ts'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(output.trimEnd().split('\n').at(-1)).toBe('vitest: 3 passed, 0 failed, 0 skipped');
  });
});
