// HTML written by tagged templates: every interpolated value is escaped
// unless it is already Html (the output of another template). Record data is
// untrusted (a name may hold markup), so nothing reaches a page unescaped by
// accident: the only way to insert raw text is to build it with `html` too.

/** Markup made by `html`: safe to insert as it is. */
export class Html {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

function render(value: Value): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  // false and nullish render as nothing, so that `${condition && html`…`}` reads naturally.
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** A template whose values are escaped (attribute values must be quoted with ""). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let text = strings[0]!;
  for (let index = 0; index < values.length; index += 1) text += render(values[index]!) + strings[index + 1]!;
  return new Html(text);
}

/** A URL a record holds, as a link target only when it is a web or mail address (never javascript: and the like). */
export function safeLinkTarget(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const { protocol } = new URL(url);
  return protocol === 'http:' || protocol === 'https:' || protocol === 'mailto:' ? url : undefined;
}
