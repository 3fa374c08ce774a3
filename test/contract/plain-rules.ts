// schemathesis ends its report pytest's way (`==== 1 warning in 25.19s ====`),
// and CI's report reads such a line as pytest's closing line: one that counts
// no passed test made a green run read as a run that tested nothing. The
// contract run prints schemathesis's rules as plain headings instead.

/** A schemathesis output line, with a pytest-style rule turned into a plain heading. */
export function plainRule(line: string): string {
  return line.replace(/^=+ (.*?) =+$/, '── $1 ──');
}
