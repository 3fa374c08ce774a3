import type { ServerResponse } from 'node:http';
import Router from '@koa/router';
import { pushCommits, streamStart, type EventSink } from '../../../services/reads/stream.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { parseQuery, parseWith } from '../../params.ts';
import { takeStreamSlots } from './connections.ts';
import { lastEventIdSchema, streamQuerySchema } from './schema.ts';

// GET /api/v2/stream: every commit pushed as a Server-Sent Event
// (services/reads/stream.ts says what an event holds and why it is complete).
// Resumed from Last-Event-ID (what EventSource sends when it reconnects), or
// from `from` (a transaction UUID, for a first connection from a known point).

/** What a client waits before reconnecting after the stream ended. */
const RETRY_MS = 2000;
/** Activities read from the feed at a time per connection. */
const CHUNK = 1000;

export function streamRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/stream' });

  router.get('/', requirePermission('read'), async (ctx) => {
    const query = parseQuery(ctx, streamQuerySchema);
    const lastEventId = parseWith(lastEventIdSchema, ctx.get('last-event-id') || undefined, 'header.Last-Event-ID');
    const start = await streamStart(deps.db, lastEventId ?? query.from);
    await takeStreamSlots(deps, ctx);

    const origin = `${ctx.protocol}://${ctx.host}`;
    // Written here, not by Koa; the status is for the request log and the metrics.
    ctx.status = 200;
    ctx.respond = false;
    ctx.req.socket.setNoDelay(true);
    ctx.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    ctx.res.write(`retry: ${RETRY_MS}\n\n`);
    const sink = responseSink(ctx.res, deps.config.STREAM_BUFFER_BYTES, deps.config.STREAM_SLOW_CONSUMER_SECONDS * 1000, (why) =>
      ctx.state.log?.info({ why }, 'push stream cut'),
    );
    await pushCommits(deps, sink, start, {
      urls: { collection: `${origin}/activity-stream`, records: `${origin}/global` },
      chunk: CHUNK,
      heartbeatMs: deps.config.STREAM_HEARTBEAT_SECONDS * 1000,
      maxMs: deps.config.STREAM_MAX_SECONDS * 1000,
      // The end's own wait for a consumer to take its last bytes, and a second more.
      endGraceMs: (deps.config.STREAM_SLOW_CONSUMER_SECONDS + 1) * 1000,
    });
  });

  return router;
}

function responseSink(res: ServerResponse, boundBytes: number, slowMs: number, logCut: (why: string) => void): EventSink {
  let closed = false;
  res.once('close', () => (closed = true));
  return {
    // A heartbeat or a last line may come after the client left: nothing to write to then.
    write: (text) => void (closed || res.destroyed || res.write(text)),
    async drained() {
      if (res.writableLength <= boundBytes || closed) return true;
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => settle(false), slowMs);
        const settle = (drained: boolean) => {
          clearTimeout(timer);
          res.off('drain', onDrain);
          res.off('close', onDrain);
          resolve(drained);
        };
        const onDrain = () => settle(true);
        res.once('drain', onDrain);
        res.once('close', onDrain);
      });
    },
    cut(why) {
      logCut(why);
      res.destroy();
    },
    end() {
      res.end();
      // A consumer that stopped reading while the stream was quiet never takes the last bytes: cut it, as a slow one.
      const unread = setTimeout(() => this.cut('slow consumer at the end'), slowMs);
      res.once('finish', () => clearTimeout(unread));
      res.once('close', () => clearTimeout(unread));
    },
    get closed() {
      return closed;
    },
    onClose: (listener) => void res.once('close', listener),
  };
}
