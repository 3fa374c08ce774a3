import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { plainRule } from '../contract/plain-rules.ts';

// CI tells a run that tested something from one that tested nothing by its
// last line, which it reads as "N passed, N failed" in any language
// (test/support/closing-line-reporter.ts prints it after vitest's summary).
describe('the closing line of a vitest run', () => {
  it('is "vitest: N passed, N failed, N skipped", last, counting the tests that ran', () => {
    const output = execFileSync('npx', ['vitest', 'run', 'test/domain/batch-force-key.test.ts'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(output.trimEnd().split('\n').at(-1)).toBe('vitest: 3 passed, 0 failed, 0 skipped');
  });
});

// CI knows pytest's closing line, and read schemathesis's (the contract run
// in .ci/run) as a pytest run that passed no test: the run that printed it
// was reported as having tested nothing.
describe("the contract run's copy of schemathesis's output", () => {
  const pytestClosing = /^=+ .*\bin [\d.]+s\b.* =+$/;

  it('prints no line that reads as pytest closing, and keeps the words of each rule', () => {
    const lines = [
      '============================= 1 warning in 25.19s ==============================',
      '=================================== SUMMARY ====================================',
      '============================= No issues found in 128.09s =======================',
      '_________________________________ GET /updates _________________________________',
      '  1837 generated, 1837 passed, 18 skipped',
    ];
    const printed = lines.map(plainRule);
    expect(printed.filter((line) => pytestClosing.test(line))).toEqual([]);
    expect(printed).toEqual(['── 1 warning in 25.19s ──', '── SUMMARY ──', '── No issues found in 128.09s ──', lines[3], lines[4]]);
  });
});
