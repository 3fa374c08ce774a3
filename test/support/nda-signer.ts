// A second, independent implementation of the real client's request
// signature, written from ELZA's ApiClientCam and OkHttp's HttpUrl
// (docs/decisions/0049): tests sign with this one, never with the service's own
// api/auth/nda-hmac.ts, so that a mistake there cannot hide behind itself.
import { createHmac } from 'node:crypto';

export interface TestKey {
  keyId: string;
  secret: string;
}

/** OkHttp's decoding of one URL component: runs of %XX become UTF-8 text, a lone '%' stays. */
function okhttpDecode(component: string, plusIsSpace: boolean): string {
  const spaced = plusIsSpace ? component.replaceAll('+', ' ') : component;
  return spaced.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) =>
    new TextDecoder('utf-8').decode(Uint8Array.from(run.slice(1).split('%'), (hex) => parseInt(hex, 16))),
  );
}

/** The string ELZA hashes: url.host() + method + "/" + join("/", url.pathSegments()) + url.query() + date. */
export function elzaDataToHash(target: { host: string; method: string; pathAndQuery: string; date: string }): string {
  const queryStart = target.pathAndQuery.indexOf('?');
  const path = queryStart === -1 ? target.pathAndQuery : target.pathAndQuery.slice(0, queryStart);
  const query = queryStart === -1 ? '' : target.pathAndQuery.slice(queryStart + 1);
  const segments = path
    .replace(/^\//, '')
    .split('/')
    .map((segment) => okhttpDecode(segment, false));
  // url.query(): each name and value decoded, re-joined with the same '&' and '='.
  const decodedQuery = query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      return equals === -1
        ? okhttpDecode(pair, true)
        : `${okhttpDecode(pair.slice(0, equals), true)}=${okhttpDecode(pair.slice(equals + 1), true)}`;
    })
    .join('&');
  return `${target.host}${target.method}/${segments.join('/')}${decodedQuery}${target.date}`;
}

/** java.time's yyyyMMddHHmmss of an instant in UTC. */
export function ndaDate(instant: Date): string {
  const two = (value: number) => String(value).padStart(2, '0');
  return `${instant.getUTCFullYear()}${two(instant.getUTCMonth() + 1)}${two(instant.getUTCDate())}${two(instant.getUTCHours())}${two(instant.getUTCMinutes())}${two(instant.getUTCSeconds())}`;
}

export function elzaSignature(secret: string, dataToHash: string): string {
  return createHmac('sha256', secret).update(dataToHash).digest('base64').replaceAll('=', '');
}

/** The X-NDA-Date and Authorization headers for a request to `pathAndQuery` (as sent on the request line) at `host`. */
export function elzaHeaders(
  key: TestKey,
  target: { host: string; method: string; pathAndQuery: string; at?: Date },
): Record<string, string> {
  const date = ndaDate(target.at ?? new Date());
  const signature = elzaSignature(
    key.secret,
    elzaDataToHash({ host: target.host, method: target.method, pathAndQuery: target.pathAndQuery, date }),
  );
  return { 'x-nda-date': date, authorization: `NDA-HMAC-SHA256 KeyId=${key.keyId},Signature=${signature}` };
}
