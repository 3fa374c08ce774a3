// Resumption tokens that never expire: a token carries everything its next
// page needs (the query, the commit point the harvest is pinned to, where the
// walk stands, the list's size when it was known on the first page, and the
// cursor), so any API process answers it, days later, after any restart.
// Nothing is kept on the server.
//
// Format 2 (docs/decisions/0134): `2.{base64url of a JSON array}.{HMAC-SHA256
// of both, base64url}`, signed with the server's token key (every API process
// has the same): a token whose fields were altered is not one this repository
// issued. Format 1 (docs/decisions/0130, unsigned base64url of a JSON array)
// is still read, so a harvest begun before format 2 ends as it began; its
// next pages get format-2 tokens.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { METADATA_PREFIXES, type MetadataPrefix } from './formats.ts';

export interface HarvestQuery {
  metadataPrefix: MetadataPrefix;
  /** The set's entity type; undefined: every record (no set, or the parent set `type`). */
  entityType?: string;
  /** Inclusive bounds on the datestamp, ISO instants at whole seconds. */
  from?: string;
  until?: string;
}

/**
 * Where a list's walk stands. `entity`: entities in id order after `after`
 * (a list without from/until, and a format-1 token's list). `window`: the
 * revisions of the commits numbered firstCommit…lastCommit (those whose
 * time is within from/until), in (transaction seq, entity id) order after
 * (afterSeq, afterEntity), up to seq lastSeq: a page reads only what changed
 * in that window.
 */
export type WalkPosition =
  | { kind: 'entity'; after: string }
  | { kind: 'window'; firstCommit: string; lastCommit: string; afterSeq: string; afterEntity: string; lastSeq: string };

export interface ResumptionToken {
  verb: 'ListIdentifiers' | 'ListRecords';
  query: HarvestQuery;
  /** The commit point (transaction.commit_seq) the harvest serves records as of. */
  commitSeq: string;
  position: WalkPosition;
  /** The list's size, when it was had cheaply on the first page (docs/decisions/0135). */
  completeListSize?: number;
  /** Records served before the next page. */
  cursor: number;
}

/** Signs and reads this repository's tokens: the first key signs, every key is accepted (a key being rotated out). */
export interface TokenCodec {
  encode(token: ResumptionToken): string;
  /** The token, or undefined for anything this repository did not issue (or could not have). */
  decode(text: string): ResumptionToken | undefined;
}

/** PostgreSQL's bigint: ids and commit numbers above it are no number the database holds. */
const BIGINT_MAX = 9223372036854775807n;
const DIGITS = /^\d{1,19}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/;
const SET_PART = /^[A-Za-z0-9\-_.!~*'()]+$/;
const MAX_TOKEN_CHARACTERS = 2048;

export function tokenCodec(keys: readonly string[], prefixes: readonly string[] = METADATA_PREFIXES): TokenCodec {
  if (keys.length === 0) throw new Error('a token codec needs at least one key');
  const mac = (key: string, payload: string) => createHmac('sha256', key).update('oai-resumption-token\0').update(payload).digest();
  const fields = { prefixes };
  return {
    encode(token) {
      const payload = `2.${Buffer.from(JSON.stringify(formatTwoFields(token)), 'utf8').toString('base64url')}`;
      return `${payload}.${mac(keys[0]!, payload).toString('base64url')}`;
    },
    decode(text) {
      if (text.length > MAX_TOKEN_CHARACTERS) return undefined;
      const signed = /^(2\.[A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(text);
      if (signed !== null) {
        const [, payload, signature] = signed as unknown as [string, string, string];
        const given = Buffer.from(signature, 'base64url');
        if (!keys.some((key) => timingSafeEqual(mac(key, payload), given))) return undefined;
        return readFormatTwo(jsonOf(payload.slice(2)), fields);
      }
      if (/^[A-Za-z0-9_-]+$/.test(text)) return readFormatOne(jsonOf(text), fields);
      return undefined;
    },
  };
}

function formatTwoFields(token: ResumptionToken): unknown[] {
  const { query, position } = token;
  return [
    token.verb,
    query.metadataPrefix,
    query.entityType ?? null,
    query.from ?? null,
    query.until ?? null,
    token.commitSeq,
    position.kind === 'entity'
      ? [position.after]
      : [position.firstCommit, position.lastCommit, position.afterSeq, position.afterEntity, position.lastSeq],
    token.completeListSize ?? null,
    token.cursor,
  ];
}

function jsonOf(base64url: string): unknown {
  try {
    return JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

function readFormatTwo(fields: unknown, context: { prefixes: readonly string[] }): ResumptionToken | undefined {
  if (!Array.isArray(fields) || fields.length !== 9) return undefined;
  const [verb, prefix, entityType, from, until, commitSeq, walk, size, cursor] = fields as unknown[];
  if (!Array.isArray(walk) || !walk.every(isBigint)) return undefined;
  const position: WalkPosition | undefined =
    walk.length === 1
      ? { kind: 'entity', after: walk[0] as string }
      : walk.length === 5
        ? {
            kind: 'window',
            firstCommit: walk[0] as string,
            lastCommit: walk[1] as string,
            afterSeq: walk[2] as string,
            afterEntity: walk[3] as string,
            lastSeq: walk[4] as string,
          }
        : undefined;
  if (position === undefined) return undefined;
  return checked({ verb, prefix, entityType, from, until, commitSeq, position, size, cursor }, context);
}

/** A format-1 token: [1, verb, prefix, type, from, until, commitSeq, after, completeListSize, cursor]. */
function readFormatOne(fields: unknown, context: { prefixes: readonly string[] }): ResumptionToken | undefined {
  if (!Array.isArray(fields) || fields.length !== 10 || fields[0] !== 1) return undefined;
  const [, verb, prefix, entityType, from, until, commitSeq, after, size, cursor] = fields as unknown[];
  if (!isBigint(after)) return undefined;
  return checked({ verb, prefix, entityType, from, until, commitSeq, position: { kind: 'entity', after }, size, cursor }, context);
}

interface Fields {
  verb: unknown;
  prefix: unknown;
  entityType: unknown;
  from: unknown;
  until: unknown;
  commitSeq: unknown;
  position: WalkPosition;
  size: unknown;
  cursor: unknown;
}

function checked(fields: Fields, context: { prefixes: readonly string[] }): ResumptionToken | undefined {
  const { verb, prefix, entityType, from, until, commitSeq, position, size, cursor } = fields;
  if (verb !== 'ListIdentifiers' && verb !== 'ListRecords') return undefined;
  if (typeof prefix !== 'string' || !context.prefixes.includes(prefix)) return undefined;
  if (entityType !== null && (typeof entityType !== 'string' || !SET_PART.test(entityType))) return undefined;
  for (const bound of [from, until]) if (bound !== null && !isInstant(bound)) return undefined;
  if (!isBigint(commitSeq)) return undefined;
  if (size !== null && !(Number.isSafeInteger(size) && (size as number) >= 0)) return undefined;
  if (!Number.isSafeInteger(cursor) || (cursor as number) < 0) return undefined;
  const query: HarvestQuery = { metadataPrefix: prefix as MetadataPrefix };
  if (entityType !== null) query.entityType = entityType;
  if (from !== null) query.from = from as string;
  if (until !== null) query.until = until as string;
  const token: ResumptionToken = { verb, query, commitSeq, position, cursor: cursor as number };
  if (size !== null) token.completeListSize = size as number;
  return token;
}

function isBigint(value: unknown): value is string {
  return typeof value === 'string' && DIGITS.test(value) && BigInt(value) <= BIGINT_MAX;
}

/** An ISO instant at whole seconds that names a real moment (2026-02-30 does not come back unchanged). */
function isInstant(value: unknown): value is string {
  if (typeof value !== 'string' || !INSTANT.test(value)) return false;
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}
