import type { Context } from 'koa';
import type { EntityRecord } from '../domain/model.ts';

/** The strong tag of a record: its rev alone stays the same across metadata-only revisions, whose document differs. */
export function recordEtag(record: { revision: Pick<EntityRecord['revision'], 'rev' | 'metadataRev'> }): string {
  return `${record.revision.rev}.${record.revision.metadataRev}`;
}

/**
 * Sets a strong ETag and tells whether the request's If-None-Match already
 * names it. Evaluated here rather than with ctx.fresh: fetch() adds
 * `Cache-Control: no-cache` to every conditional request, which makes Koa's
 * cache-oriented freshness check always say stale, while an origin server
 * should still answer 304 (RFC 9110 §13.1.2).
 */
export function etagMatches(ctx: Context, tag: string): boolean {
  const etag = `"${tag}"`;
  ctx.set('ETag', etag);
  return ifNoneMatchNames(ctx.get('if-none-match'), etag);
}

/** Whether an If-None-Match header ('' or undefined when absent) names the entity tag `etag` (quoted), weakly or strongly. */
export function ifNoneMatchNames(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}
