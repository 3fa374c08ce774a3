import { createHmac, type KeyObject } from 'node:crypto';
import { hostnameOf } from '../../settings/host-name.ts';

// The request signature of the registry's real client (ELZA's ApiClientCam, an
// OkHttp interceptor; docs/decisions/0049 quotes it). Pure: the API verifies
// with it and the CLI signs with it, so both build the same canonical string.

export const NDA_HMAC_SCHEME = 'NDA-HMAC-SHA256';
export const NDA_DATE_HEADER = 'X-NDA-Date';

export interface SignedParts {
  /** The host name the client called: no port, no IPv6 brackets, lower case. */
  host: string;
  method: string;
  /** The path as sent on the request line (still percent-encoded). */
  rawPath: string;
  /** The query as sent, without '?'; empty when there is none. */
  rawQuery: string;
  /** The X-NDA-Date value. */
  date: string;
}

/** The canonical string's parts as the server reads them, each decoded as the client decodes it. */
export interface CanonicalParts {
  host: string;
  method: string;
  /** "/" + the decoded path segments joined by "/". */
  path: string;
  /** The decoded query, without '?'. */
  query: string;
  date: string;
}

/**
 * host + METHOD + "/" + decoded path segments joined by "/" + decoded query + date:
 * OkHttp's `url.host()`, `url.pathSegments()` and `url.query()`. Segments are
 * decoded one by one ('+' stays '+'); the query is decoded whole with '+' as a
 * space, which equals OkHttp's decoding of each name and value, since
 * separators are never part of an escape.
 */
export function canonicalParts(parts: SignedParts): CanonicalParts {
  const segments = (parts.rawPath.startsWith('/') ? parts.rawPath.slice(1) : parts.rawPath).split('/');
  const path = segments.map((segment) => percentDecode(segment, false)).join('/');
  return { host: parts.host, method: parts.method, path: `/${path}`, query: percentDecode(parts.rawQuery, true), date: parts.date };
}

export function canonicalString(parts: SignedParts): string {
  return joinCanonical(canonicalParts(parts));
}

/** The string that is signed: the parts run together. */
export function joinCanonical({ host, method, path, query, date }: CanonicalParts): string {
  return `${host}${method}${path}${query}${date}`;
}

/**
 * Base64 without '=' padding of HMAC-SHA256 keyed with the secret's UTF-8
 * bytes. A verifier passes the key prepared once (createSecretKey): Node
 * prepares a key given as a Buffer anew on every call, which cost about four
 * times the HMAC itself.
 */
export function ndaSignature(secret: string | KeyObject, canonical: string): string {
  return createHmac('sha256', secret).update(canonical, 'utf8').digest('base64').replace(/=+$/, '');
}

/** yyyyMMddHHmmss in UTC. */
export function formatNdaDate(instant: Date): string {
  return instant.toISOString().replace(/[-T:]/g, '').slice(0, 14);
}

/** Milliseconds since the epoch of a yyyyMMddHHmmss (UTC) value; undefined when it is not one. */
export function parseNdaDate(value: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const millis = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 20261332… over into the next year: only a value that survives the round trip is a date.
  return formatNdaDate(new Date(millis)) === value ? millis : undefined;
}

export function authorizationValue(keyId: string, signature: string): string {
  return `${NDA_HMAC_SCHEME} KeyId=${keyId},Signature=${signature}`;
}

/** The two headers a client adds to a request for `url`, signed at `now`. */
export function signRequest(request: { url: URL; method: string; keyId: string; secret: string; now?: Date }): Record<string, string> {
  const date = formatNdaDate(request.now ?? new Date());
  const canonical = canonicalString({
    host: hostnameOf(request.url.host)!,
    method: request.method.toUpperCase(),
    rawPath: request.url.pathname,
    rawQuery: request.url.search.slice(1),
    date,
  });
  return { [NDA_DATE_HEADER]: date, authorization: authorizationValue(request.keyId, ndaSignature(request.secret, canonical)) };
}

/**
 * OkHttp's percentDecode: `%XX` becomes the byte, other characters their UTF-8
 * bytes, a '%' without two hex digits stays as it is, and the bytes are read
 * as UTF-8 (malformed sequences become U+FFFD).
 */
function percentDecode(text: string, plusIsSpace: boolean): string {
  if (!text.includes('%') && !(plusIsSpace && text.includes('+'))) return text;
  const bytes: number[] = [];
  for (let index = 0; index < text.length;) {
    const char = text[index]!;
    if (char === '%' && index + 2 < text.length && isHex(text[index + 1]!) && isHex(text[index + 2]!)) {
      bytes.push(Number.parseInt(text.slice(index + 1, index + 3), 16));
      index += 3;
    } else if (char === '+' && plusIsSpace) {
      bytes.push(0x20);
      index += 1;
    } else {
      const codePoint = text.codePointAt(index)!;
      const width = codePoint > 0xffff ? 2 : 1;
      for (const byte of Buffer.from(text.slice(index, index + width), 'utf8')) bytes.push(byte);
      index += width;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function isHex(char: string): boolean {
  return /^[0-9a-fA-F]$/.test(char);
}
