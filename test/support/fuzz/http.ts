// Sends a fuzzed request with node:http, which (unlike fetch) sends the path
// as given (no normalising of `..` or percent-encoding) and reports the
// final 102 of the v1 batch operations as an 'information' event.
import { request } from 'node:http';
import type { FuzzRequest } from './requests.ts';
import { signatureHeaders } from './signatures.ts';

export interface Exchange {
  /** The final status, or 102 when the server answered a final 102 and closed the connection. */
  status: number | undefined;
  contentType: string | undefined;
  /** Every answer of the app carries one; Node's HTTP parser rejects a malformed request before the app sees it, without one. */
  requestId: string | undefined;
  /** The first characters of the body. */
  bodyStart: string;
  /** Why no complete answer arrived: a socket error, a body cut off, or the timeout. */
  error: string | undefined;
}

const KEPT_BODY_CHARS = 300;

export function exchange(baseUrl: string, fuzzed: FuzzRequest, timeoutMs: number): Promise<Exchange> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    let informational: number | undefined;
    let requestId: string | undefined;
    const settle = (outcome: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const failed = (error: string) =>
      settle(
        informational === 102
          ? { status: 102, contentType: undefined, requestId, bodyStart: '', error: undefined }
          : { status: undefined, contentType: undefined, requestId: undefined, bodyStart: '', error },
      );

    const headers: Record<string, string> = { ...fuzzed.headers, connection: 'close' };
    if (fuzzed.signWith)
      Object.assign(headers, signatureHeaders(fuzzed.signWith, { method: fuzzed.method, pathAndQuery: fuzzed.path, host: hostname, port }));
    // Node frames a GET body only when told to; unframed bytes would be parsed as a second request.
    if (fuzzed.body)
      headers[fuzzed.chunked ? 'transfer-encoding' : 'content-length'] = fuzzed.chunked ? 'chunked' : String(fuzzed.body.length);
    const outgoing = request({ host: hostname, port, method: fuzzed.method, path: fuzzed.path, headers, agent: false, setHost: true });
    const timer = setTimeout(() => {
      failed(`no answer within ${timeoutMs} ms`);
      outgoing.destroy();
    }, timeoutMs);

    outgoing.on('information', (info) => {
      informational = info.statusCode;
      requestId = headerValue(info.headers['x-request-id']);
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => failed(`${error.code ?? 'error'}: ${error.message}`));
    outgoing.on('response', (response) => {
      // A push stream (text/event-stream) answers with its status and headers and never ends by design: that is its answer.
      if (response.statusCode === 200 && String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        settle({
          status: response.statusCode,
          contentType: response.headers['content-type'],
          requestId: headerValue(response.headers['x-request-id']),
          bodyStart: '',
          error: undefined,
        });
        outgoing.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < KEPT_BODY_CHARS * 4) chunks.push(chunk);
        kept += chunk.length;
      });
      response.on('error', (error) => failed(`response cut off after ${response.statusCode}: ${error.message}`));
      response.on('aborted', () => failed(`response cut off after ${response.statusCode}`));
      response.on('end', () =>
        settle({
          status: response.statusCode,
          contentType: response.headers['content-type'],
          requestId: headerValue(response.headers['x-request-id']),
          bodyStart: Buffer.concat(chunks).toString('utf8').slice(0, KEPT_BODY_CHARS),
          error: response.complete ? undefined : `response cut off after ${response.statusCode}`,
        }),
      );
    });
    outgoing.end(fuzzed.body);
  });
}

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);
