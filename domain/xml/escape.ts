// The one place where text becomes XML markup. XML 1.0 cannot carry some
// characters at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF), not
// even as character references, so they are refused instead of being written
// into a document no parser would accept.

const FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
// Without the u flag the check is much faster; it also stops at every
// surrogate, and only then does the exact check above decide.
const SUSPECT = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/;
const TEXT_SPECIAL = /[&<>\r]/g;
// Tabs and line ends are escaped in attributes because attribute-value
// normalisation would otherwise turn them into spaces on the way back in.
const ATTRIBUTE_SPECIAL = /[&<>"'\t\n\r]/g;

const REPLACEMENTS: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

function replace(char: string): string {
  return REPLACEMENTS[char] ?? char;
}

/** Index of the first character XML 1.0 cannot represent, or -1. */
export function findForbiddenCharacter(value: string): number {
  if (!SUSPECT.test(value)) return -1;
  const match = FORBIDDEN.exec(value);
  return match === null ? -1 : match.index;
}

function assertRepresentable(value: string): void {
  const index = findForbiddenCharacter(value);
  if (index >= 0) {
    const code = value.codePointAt(index) ?? 0;
    throw new RangeError(`U+${code.toString(16).toUpperCase().padStart(4, '0')} at index ${index} cannot be written in XML 1.0`);
  }
}

export function escapeText(value: string): string {
  assertRepresentable(value);
  return value.replace(TEXT_SPECIAL, replace);
}

export function escapeAttribute(value: string): string {
  assertRepresentable(value);
  return value.replace(ATTRIBUTE_SPECIAL, replace);
}
