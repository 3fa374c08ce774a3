import type { Context } from 'koa';

// The address a request came from, for limits kept per source address
// (anonymous readers of record pages and OAI-PMH, failed authentication).
// Taken from the connection: a header an untrusted peer sent never decides it.

/** The client's address as the connection shows it ('unknown' when the socket has closed). */
export function clientAddress(ctx: Context): string {
  return ctx.req.socket.remoteAddress ?? 'unknown';
}
