import type { Context } from 'koa';
import type { Html } from './html.ts';
import { layout, type PageFrame } from './layout.ts';
import { errorMain } from './sign-in-view.ts';

// How every record page answers: HTML under a CSP that allows our own
// stylesheet and nothing else (no script at all), and a refusal as a page of
// its own, never problem+json: the reader is a person with a browser.

const PAGES_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A page refused or not found: its status, title and message, and any headers (Retry-After). */
export class PageError extends Error {
  readonly status: number;
  readonly title: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly links: Html | undefined;

  constructor(status: number, title: string, message: string, options: { headers?: Record<string, string>; links?: Html } = {}) {
    super(message);
    this.status = status;
    this.title = title;
    this.headers = options.headers ?? {};
    this.links = options.links;
  }
}

function setPageHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', PAGES_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  // Pages may depend on who is signed in: never kept by a shared cache.
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('Vary', 'Cookie, Authorization');
}

export function sendPage(ctx: Context, frame: PageFrame, status = 200): void {
  setPageHeaders(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = layout(frame);
}

export function sendError(ctx: Context, error: PageError, viewer: PageFrame['viewer']): void {
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  sendPage(ctx, { title: error.title, main: errorMain(error.title, error.message, error.links), viewer }, error.status);
}

/** A redirect after a form (303: the browser follows with a GET). */
export function seeOther(ctx: Context, location: string): void {
  setPageHeaders(ctx);
  ctx.status = 303;
  ctx.set('Location', location);
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = `See ${location}`;
}
