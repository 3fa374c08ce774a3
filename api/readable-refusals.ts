import type { IncomingMessage, Server } from 'node:http';
import type { Middleware } from 'koa';
import type { Config } from '../config.ts';

// A refusal the client can read. Many clients (Python's urllib, OkHttp, the
// registry's own client) write the whole body before they read the answer:
// a refusal sent before the body is read, with the connection closed at
// once, reaches them as a broken pipe. So a request refused before a byte of
// its body was read gets its answer, then the rest of its body is read and
// thrown away (as nginx's lingering close does), within BATCH_MAX_BYTES and
// REFUSED_BODY_DRAIN_SECONDS, before the connection is closed or reused; and
// a client that sends `Expect: 100-continue` is told 100 Continue only when
// its body is about to be read (api/body.ts), so a refusal comes instead.

/** Makes `server` leave 100 Continue to the body readers instead of sending it with every request. */
export function honourExpectContinue<S extends Server>(server: S): S {
  server.on('checkContinue', (req: IncomingMessage, res) => server.emit('request', req, res));
  return server;
}

/** Reads and throws away, within bounds, the unread body of a request this service refused. */
export function drainRefusedBodies(config: Pick<Config, 'BATCH_MAX_BYTES' | 'REFUSED_BODY_DRAIN_SECONDS'>): Middleware {
  return async function drainRefusedBodiesMiddleware(ctx, next) {
    await next();
    const { req, res } = ctx;
    if (ctx.status < 400 || config.REFUSED_BODY_DRAIN_SECONDS === 0) return;
    if (req.complete || req.readableDidRead || req.destroyed || !hasBody(req)) return;
    // Node ends a connection whose client asked for its close as soon as the answer is written, while the body
    // still arrives: the client's next write is reset. Kept open, the client closes it once it has read the answer.
    res.shouldKeepAlive = true;
    res.removeHeader('connection');
    let drained = 0;
    const cut = () => req.socket.destroy();
    const deadline = setTimeout(cut, config.REFUSED_BODY_DRAIN_SECONDS * 1000);
    deadline.unref();
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > config.BATCH_MAX_BYTES) cut();
    });
    req.once('close', () => clearTimeout(deadline));
  };
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
