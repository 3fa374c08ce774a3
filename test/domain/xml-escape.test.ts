import { describe, expect, it } from 'vitest';
import { escapeAttribute, escapeText, findForbiddenCharacter } from '../../domain/xml/escape.ts';

describe('escaping', () => {
  it('escapes markup in text and keeps quotes and non-ASCII as they are', () => {
    expect(escapeText(`a<b>&c"d'e ]]> Příliš žluťoučký kůň`)).toBe(`a&lt;b&gt;&amp;c"d'e ]]&gt; Příliš žluťoučký kůň`);
  });

  it('escapes quotes, tabs and line ends in attributes, so they survive normalisation', () => {
    expect(escapeAttribute(`"x" & 'y' <z>\t\r\nčř`)).toBe('&quot;x&quot; &amp; &apos;y&apos; &lt;z&gt;&#9;&#13;&#10;čř');
  });

  it('keeps carriage returns in text as a reference', () => {
    expect(escapeText('a\r\nb')).toBe('a&#13;\nb');
  });

  it('keeps characters outside the basic plane', () => {
    expect(escapeText('𝄞 😀')).toBe('𝄞 😀');
  });

  it('refuses what XML 1.0 cannot carry', () => {
    for (const bad of ['\u0000', '\u0001', '\u000B', '\u001F', '\uFFFE', '\uFFFF', '\uD800', 'x\uDC00']) {
      expect(() => escapeText(bad)).toThrow(RangeError);
      expect(() => escapeAttribute(bad)).toThrow(RangeError);
    }
    expect(findForbiddenCharacter('ok\u0008')).toBe(2);
    expect(findForbiddenCharacter('\t\n\r ok')).toBe(-1);
  });
});
