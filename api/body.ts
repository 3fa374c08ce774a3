import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { problem } from './problems.ts';

const XML_TYPES = ['application/xml', 'text/xml'];

/**
 * Reads an XML request body within `limit` bytes. A declared Content-Length
 * over the limit is refused before a byte is read.
 */
export async function readXmlBody(ctx: Context, limit: number): Promise<Buffer> {
  if (!ctx.request.is(XML_TYPES)) {
    throw problem(415, 'UnsupportedMediaType', `expected ${XML_TYPES.join(' or ')}, got ${ctx.get('content-type') || 'no content type'}`);
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) {
    throw problem(413, 'PayloadTooLarge', `body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
  return getRawBody(ctx.req, { length: declared, limit });
}
