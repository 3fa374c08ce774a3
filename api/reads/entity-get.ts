import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Histogram } from 'prom-client';
import type { EntityRecord, XmlVersion } from '../../domain/model.ts';
import { v2DocumentRevision } from '../../domain/xml/compiled-entity-writer.ts';
import { serializeEntity } from '../../domain/xml/index.ts';
import type { HttpLabel } from '../../metrics/api.ts';
import { findCurrentDocument, findCurrentRecord, type CurrentForm } from '../../services/reads/entities.ts';
import { readSideFor } from '../../services/reads/read-side.ts';
import { NDA_DATE_HEADER } from '../auth/nda-hmac.ts';
import { resolveClientAddress, trustedProxyList } from '../client-address.ts';
import { forwardedHeader, forwardedTrust } from '../forwarded.ts';
import { ifNoneMatchNames, recordEtag } from '../conditional.ts';
import type { AppDeps } from '../deps.ts';
import { credentialChecker, hasPermission } from '../middleware/auth.ts';
import { logRequest, requestIdOf } from '../middleware/request-context.ts';
import { endServerSpan, startServerSpan } from '../middleware/tracing.ts';
import { parseEntityRef } from '../params.ts';
import { ENTITY_ID_PARAMETER } from './entities.ts';
import { EAC_CPF } from '../../domain/eac-cpf/writer.ts';

// GET of a current record, the service's hottest request, answered without
// Koa when nothing about it needs Koa: a GET of /api/v1|v2/entities/{id}
// with neither query nor Origin (no CORS) nor an Accept to negotiate (v1's
// text/xml or application/xml; for v2 only one naming EAC-CPF,
// api/reads/eac-cpf.ts, since the real client sends application/json and
// v2 answers XML to every other Accept), whose credentials hold the read
// permission and whose record exists. It answers exactly as the Koa chain does (the same headers in the
// same order, ETag and 304, the request line at debug, the duration metric
// and, with tracing on, the server span under the route's pattern;
// test/integration/entity-get-direct.test.ts holds the two side by side);
// any other request, and one of these whose answer is a problem (401, 403,
// 404, 500), goes to Koa, which answers it as it answers every request.
// Without Koa's context, middleware and router (and with the reads batched
// across turns, db/records.ts, and the compiled writer) such a GET escapes
// the chain's cost, about 45% of the request rate (decision 0078).

const asForm = (record: EntityRecord | undefined): CurrentForm | undefined => (record === undefined ? undefined : { record });

/** What Koa gives a server to call (app.callback()). */
type Handler = ReturnType<Koa['callback']>;

/** Whether the Accept header leaves a choice to the route: any but `*∕*` for v1, one naming EAC-CPF for v2. */
function asksToNegotiate(version: XmlVersion, accept: string | undefined): boolean {
  if (accept === undefined || accept === '*/*') return false;
  return version === 'v1' || accept.includes(EAC_CPF.mediaType);
}

/** Node gives header names in lower case. */
const DATE_HEADER = NDA_DATE_HEADER.toLowerCase();
// The lower-case spelling only: any other (the routers and the strict query check match paths in any case) goes to Koa.
const PATH = /^\/api\/(v[12])\/entities\/([0-9A-Za-z-]{1,36})$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The Koa handler with the direct GET of a current record in front of it. */
export function withDirectEntityGet(deps: AppDeps, histogram: Histogram<HttpLabel>, koa: Handler): Handler {
  const check = credentialChecker(deps.tokens, deps.config);
  const trustedProxies = trustedProxyList(deps.config);
  const trust = forwardedTrust(deps.config);
  const { log, tracer } = deps;
  // The duration metric's labels, made once: this path answers 200 or 304 only.
  const labelsOf = (version: XmlVersion) => {
    const route = `/api/${version}/entities/:${ENTITY_ID_PARAMETER[version]}`;
    return { 200: { route, method: 'GET', status: '200' }, 304: { route, method: 'GET', status: '304' } } as const;
  };
  const labels = { v1: labelsOf('v1'), v2: labelsOf('v2') };
  // As Koa's ctx.type writes them (mime-types adds a charset to text/* only).
  const types = { v1: 'text/xml; charset=utf-8', v2: 'application/xml' };
  // v2's answer depends on Accept (api/reads/eac-cpf.ts), so its route adds Accept to CORS's Vary.
  const vary = { v1: 'Origin', v2: 'Origin, Accept' };

  return function directEntityGet(request, response) {
    // Never HTTP/2 here: the API serves HTTP/1.1 (api/serve.ts).
    const req = request as IncomingMessage;
    const res = response as ServerResponse;
    const match = req.method === 'GET' ? PATH.exec(req.url!) : null;
    if (match === null) return koa(req, res);
    const { headers } = req;
    const version = match[1] as XmlVersion;
    if (headers.origin !== undefined || asksToNegotiate(version, headers.accept)) return koa(req, res);
    const ref = parseEntityRef(match[2]);
    if (ref === undefined) return koa(req, res);
    const path = match[0];
    const started = performance.now();
    const credentials = check({
      authorization: headers.authorization ?? '',
      date: (headers[DATE_HEADER] as string | undefined) ?? '',
      host: headers.host ?? '',
      forwardedHost: forwardedHeader(req, 'host', trust),
      method: 'GET',
      rawPath: path,
      rawQuery: '',
      clientAddress: resolveClientAddress(req, trustedProxies),
    });
    if (!credentials.ok || !hasPermission(credentials.principal, 'read')) return koa(req, res);
    // v2 takes the document stored beside the record where there is one (the bytes the writer would write).
    const found: Promise<CurrentForm | undefined> = readSideFor(deps.db.reads, credentials.principal.name).then(({ records }) =>
      version === 'v2' ? findCurrentDocument(records, ref) : findCurrentRecord(records, ref).then(asForm),
    );
    return found.then(
      (form) => {
        if (form === undefined) return koa(req, res);
        let etag: string;
        // The response's bytes: a Buffer, or a string of one character a byte (latin1), as the document is read.
        let body: Buffer | string | undefined;
        if (form.documentBytes !== undefined) {
          const revision = v2DocumentRevision(form.documentBytes);
          // Not a document this writer wrote (or revisions beyond ASCII, read here as bytes): Koa's chain builds it from the record.
          if (revision === undefined || !PRINTABLE_ASCII.test(revision.rev) || !PRINTABLE_ASCII.test(revision.metadataRev))
            return koa(req, res);
          etag = `"${recordEtag({ revision })}"`;
          if (!ifNoneMatchNames(headers['if-none-match'], etag)) body = form.documentBytes;
        } else {
          etag = `"${recordEtag(form.record)}"`;
          try {
            if (!ifNoneMatchNames(headers['if-none-match'], etag)) body = Buffer.from(serializeEntity(form.record, version));
          } catch {
            // Koa's chain meets the same error and answers it as a problem.
            return koa(req, res);
          }
        }
        const notModified = body === undefined;
        const requestId = requestIdOf(headers['x-request-id'] as string | undefined);
        const status = notModified ? 304 : 200;
        logRequest(log, { requestId, method: 'GET', path, status, principal: credentials.principal.name }, started, true);
        // As Koa: nothing more to a client that went away.
        if (res.socket !== null && !res.socket.writable) {
          res.end();
          return;
        }
        const observed = labels[version][status];
        res.once('close', () => histogram.observe(observed, (performance.now() - started) / 1000));
        if (tracer) {
          // Made only now that this path answers: a request handed to Koa gets Koa's span instead.
          const span = startServerSpan(tracer, 'GET', headers, started);
          res.once('close', () => endServerSpan(span, 'GET', observed.route, status));
        }
        // The headers as the Koa chain sets them, in its order: request id, CORS's Vary, the route's, Koa's.
        if (body === undefined) {
          res.writeHead(304, { 'X-Request-Id': requestId, Vary: vary[version], 'Cache-Control': 'no-cache', ETag: etag });
          res.end();
        } else {
          // Either form's length is its length in bytes.
          res.writeHead(200, {
            'X-Request-Id': requestId,
            Vary: vary[version],
            'Cache-Control': 'no-cache',
            ETag: etag,
            'Content-Type': types[version],
            'Content-Length': String(body.length),
          });
          res.end(body, 'latin1');
        }
      },
      // A failed read: Koa's chain reads again and answers whatever it meets.
      () => koa(req, res),
    );
  };
}
