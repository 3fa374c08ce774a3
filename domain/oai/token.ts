// Resumption tokens that never expire: a token carries everything its next
// page needs (the query, the commit point the harvest is pinned to, the last
// record served, the list's size counted on the first page and the cursor),
// so any API process answers it, days later, after any restart. Nothing is
// kept on the server. A token is base64url of a small JSON array.

import type { MetadataPrefix } from './protocol.ts';

export interface HarvestQuery {
  metadataPrefix: MetadataPrefix;
  /** The set's entity type. */
  entityType?: string;
  /** Inclusive bounds on the datestamp, ISO instants at whole seconds. */
  from?: string;
  until?: string;
}

export interface ResumptionToken {
  verb: 'ListIdentifiers' | 'ListRecords';
  query: HarvestQuery;
  /** The commit point (transaction.commit_seq) the harvest serves records as of. */
  commitSeq: string;
  /** The entityId of the last record served: the next page starts after it. */
  after: string;
  completeListSize: number;
  /** Records served before the next page. */
  cursor: number;
}

const FORMAT = 1;
const DIGITS = /^\d{1,19}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/;

export function encodeResumptionToken(token: ResumptionToken): string {
  const { query } = token;
  const fields = [
    FORMAT,
    token.verb,
    query.metadataPrefix,
    query.entityType ?? null,
    query.from ?? null,
    query.until ?? null,
    token.commitSeq,
    token.after,
    token.completeListSize,
    token.cursor,
  ];
  return Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

/** The token, or undefined for anything this repository did not issue (or could not have). */
export function decodeResumptionToken(text: string): ResumptionToken | undefined {
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(text)) return undefined;
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length !== 10 || fields[0] !== FORMAT) return undefined;
  const [, verb, prefix, entityType, from, until, commitSeq, after, size, cursor] = fields as unknown[];
  if (verb !== 'ListIdentifiers' && verb !== 'ListRecords') return undefined;
  if (prefix !== 'oai_dc' && prefix !== 'cam-2025') return undefined;
  if (entityType !== null && (typeof entityType !== 'string' || !/^[A-Za-z0-9\-_.!~*'()]+$/.test(entityType))) return undefined;
  for (const bound of [from, until])
    if (bound !== null && (typeof bound !== 'string' || !INSTANT.test(bound) || Number.isNaN(Date.parse(bound)))) return undefined;
  if (typeof commitSeq !== 'string' || !DIGITS.test(commitSeq) || typeof after !== 'string' || !DIGITS.test(after)) return undefined;
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(cursor) || (size as number) < 0 || (cursor as number) < 0) return undefined;
  const query: HarvestQuery = { metadataPrefix: prefix };
  if (entityType !== null) query.entityType = entityType;
  if (from !== null) query.from = from as string;
  if (until !== null) query.until = until as string;
  return { verb, query, commitSeq, after, completeListSize: size as number, cursor: cursor as number };
}
