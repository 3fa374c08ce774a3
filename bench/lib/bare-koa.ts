// The baseline of the GET entity benchmark: a bare Koa app (one middleware,
// no router, auth, database or XML writer) answering each path with the bytes
// and headers the real API answered for it, prefetched into a JSON file.
//
//   node bench/lib/bare-koa.ts RESPONSES.json PORT
//
// Prints "listening" on stdout once it accepts connections.
import { readFileSync } from 'node:fs';
import Koa from 'koa';

export interface PrefetchedResponse {
  body: string;
  contentType: string;
  etag?: string;
}

const [file, port] = process.argv.slice(2);
if (!file || !port) throw new Error('usage: bare-koa.ts RESPONSES.json PORT');
const responses = new Map<string, { body: Buffer; contentType: string; etag?: string }>(
  Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, PrefetchedResponse>).map(([path, response]) => [
    path,
    { body: Buffer.from(response.body), contentType: response.contentType, etag: response.etag },
  ]),
);

const app = new Koa();
app.use((ctx) => {
  const response = responses.get(ctx.path);
  if (!response) {
    ctx.status = 404;
    return;
  }
  ctx.set('Cache-Control', 'no-cache');
  if (response.etag) ctx.set('ETag', response.etag);
  ctx.type = response.contentType;
  ctx.body = response.body;
});
app.listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
