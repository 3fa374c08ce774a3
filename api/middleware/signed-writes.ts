import type { Middleware } from 'koa';
import { Counter, type Registry } from 'prom-client';
import { NDA_HMAC_SCHEME } from '../auth/nda-hmac.ts';
import { problem } from '../problems.ts';
import type { RequestSignature } from './auth.ts';

// The signature does not cover the body, so a captured signed write can be
// sent again with another body while its date is accepted. The replay guard
// (db/replay-guard.ts) sees a second body under a key and signature when the
// write claims them; this says what is done then (docs/decisions/0144): the
// write is logged (the key id, never the signature) and counted always, and
// refused for a key marked singleWriter in API_KEYS, which sends one write
// per signature second.

/** Adds to a signed request's ctx.state.signature what its write does when its signature was seen with another body. */
export function watchSignedWrites(registry: Registry): Middleware {
  const reused = new Counter({
    name: 'signed_write_signature_reused_total',
    help: 'Signed writes whose key and signature an earlier write had used with another body, by what was done (refused: a single-writer key)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  return async function watchSignedWritesMiddleware(ctx, next) {
    const signature = ctx.state.signature as RequestSignature | undefined;
    if (signature) {
      const { keyId, singleWriter } = signature;
      const onOtherBody = () => {
        reused.inc({ outcome: singleWriter ? 'refused' : 'accepted' });
        ctx.state.log?.warn(
          { keyId, principal: ctx.state.principal?.name, method: ctx.method, path: ctx.path, refused: singleWriter },
          'signed write reuses the signature of an earlier write with another body',
        );
        if (singleWriter) throw signatureReused();
      };
      ctx.state.signature = { ...signature, onOtherBody } satisfies RequestSignature;
    }
    return next();
  };
}

function signatureReused() {
  const error = problem(
    401,
    'Unauthorized',
    'this key sends one write per signature: its signature was already used with another body. Sign the request again (a new X-NDA-Date) and send it',
    undefined,
    { reason: 'SignatureReused' },
  );
  error.headers = { 'WWW-Authenticate': `Bearer realm="entity-records", ${NDA_HMAC_SCHEME} realm="entity-records"` };
  return error;
}
