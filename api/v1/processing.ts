import type { Context } from 'koa';

/**
 * Answers a FINAL `102 Processing`, as the v1 interface defines it for a batch
 * still being processed. Node's ServerResponse cannot send a 1xx as the final
 * answer (writeHead(102) goes out as an interim response and the connection
 * then waits for the real one), so the status line and headers are written
 * on the socket directly and the connection is closed: a 1xx has no body and
 * no Content-Length (RFC 9110 §8.6), so closing is the only way to end it.
 * Clients that follow RFC 9110 treat any 1xx as interim; they see 102 and
 * then the connection closing (curl: exit 52, undici: "other side closed").
 */
export function respondProcessing(ctx: Context, headers: Record<string, string> = {}): void {
  // For the request log and the error middleware; Koa writes nothing once respond is false.
  ctx.status = 102;
  ctx.respond = false;
  const socket = ctx.req.socket;
  if (socket.destroyed) return;
  const lines = ['HTTP/1.1 102 Processing', `Date: ${new Date().toUTCString()}`];
  for (const [name, value] of Object.entries({ ...ctx.response.headers, ...headers })) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${String(one).replace(/[\r\n]/g, ' ')}`);
  }
  lines.push('Connection: close');
  socket.end(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}
