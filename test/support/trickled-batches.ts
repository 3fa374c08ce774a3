// Batches sent as a writer on a link too slow to be one would: the load of
// the upload tests that check a trickling writer holds no one else up.
import { randomUUID } from 'node:crypto';
import { batchXml, create } from './batches.ts';
import { trickledPost, type TrickledPost } from './chunked-post.ts';

/** `count` POSTs of a one-record batch to /api/v2/batches under `token`: half the body at once, then a byte every `everyMs`. */
export function trickledBatches(baseUrl: string, token: string, count: number, everyMs: number): TrickledPost[] {
  const xml = batchXml([create('a', `Trickled ${randomUUID()}`)]);
  const half = Math.floor(xml.length / 2);
  return Array.from({ length: count }, () =>
    trickledPost(
      new URL('/api/v2/batches', baseUrl),
      { 'content-type': 'application/xml', authorization: `Bearer ${token}` },
      xml.slice(0, half),
      xml.slice(half),
      everyMs,
    ),
  );
}
