import type { Context } from 'koa';

/**
 * v1 answers XML as `text/xml`, the media type of its OpenAPI, unless the
 * client asks for `application/xml` (v2's type) in particular.
 */
export function setV1XmlType(ctx: Context): void {
  ctx.type = ctx.accepts('text/xml', 'application/xml') === 'application/xml' ? 'application/xml' : 'text/xml';
}
