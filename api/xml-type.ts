import type { Context } from 'koa';
import type { XmlVersion } from '../domain/model.ts';
import { setV1XmlType } from './v1/xml.ts';

/** The media type of an XML answer in the interface version of its route. */
export function setXmlType(ctx: Context, version: XmlVersion): void {
  if (version === 'v1') setV1XmlType(ctx);
  else ctx.type = 'application/xml';
}
