import { html, type Html } from './html.ts';

/** Previous and next links of a paged list, and where the list stands. */
export function pager(options: {
  page: number;
  pageSize: number;
  total: number;
  href: (page: number) => string;
  label: string;
}): Html | undefined {
  const { page, pageSize, total, href } = options;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1 && page <= 1) return undefined;
  return html`<nav class="pager" aria-label="${options.label}">
  ${page > 1 && html`<a rel="prev" href="${href(Math.min(page - 1, pages))}">Previous</a>`}
  <span>Page ${page} of ${pages}</span>
  ${page < pages && html`<a rel="next" href="${href(page + 1)}">Next</a>`}
</nav>`;
}
