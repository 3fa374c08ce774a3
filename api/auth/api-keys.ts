import { createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { addressList, type AddressList } from '../../settings/address-list.ts';
import type { ApiKey } from '../../settings/api-key-list.ts';
import { canonicalParts, formatNdaDate, joinCanonical, ndaSignature, parseNdaDate, type CanonicalParts } from './nda-hmac.ts';
import type { Principal } from './tokens.ts';

export interface SignedRequest {
  authorization: string;
  /** The X-NDA-Date header. */
  date: string;
  /** The host name the client signed (see the auth middleware); undefined when the request names none. */
  host: string | undefined;
  method: string;
  rawPath: string;
  rawQuery: string;
  /** The client's address (api/client-address.ts), for the keys' allow-lists. */
  clientAddress: string;
}

interface VerifiedSignature {
  principal: Principal;
  keyId: string;
  /** The signature as presented (without padding), for the replay guard. */
  signature: string;
  /** When the signature's date leaves the accepted window (ms since the epoch). */
  expiresAt: number;
  /** Whether a write reusing this signature with another body is refused (else only logged and counted). */
  singleWriter: boolean;
}

/**
 * Which check a signed request failed: the 401's `properties.reason`. An
 * unknown key id, a wrong signature and an address outside the key's
 * allow-list are all SignatureMismatch, so key ids cannot be enumerated; the
 * server's log says which (`why`).
 */
export type SignatureRefusalReason =
  'MalformedSignatureHeader' | 'DateMissing' | 'DateInvalid' | 'DateOutsideWindow' | 'HostMissing' | 'SignatureMismatch';

interface SignatureRefusal {
  reason: SignatureRefusalReason;
  /** For the server's log only: what a SignatureMismatch really was. */
  why?: 'UnknownKeyId' | 'AddressNotAllowed' | 'WrongSignature';
  /** What failed, for the person reading the 401: the request's own values, never a secret. */
  detail: string;
  /** SignatureMismatch: the canonical string's parts as the server read them. */
  canonical?: CanonicalParts;
}

export type SignatureCheck = { ok: true; verified: VerifiedSignature } | { ok: false; refusal: SignatureRefusal };

// What ELZA sends, exactly: "NDA-HMAC-SHA256 KeyId=<id>,Signature=<43 base64 characters>" (padding tolerated).
const AUTHORIZATION = /^NDA-HMAC-SHA256 +KeyId=([^\s,]+) *, *Signature=([A-Za-z0-9+/]{43})=?$/i;

interface StoredKey {
  keyId: string;
  /** The secret's UTF-8 bytes, prepared once for HMAC. */
  hmacKey: KeyObject;
  principal: Principal;
  allowFrom: AddressList | undefined;
  skewMs: number;
  singleWriter: boolean;
}

/**
 * Checks NDA-HMAC-SHA256 signatures against the configured keys. A refusal
 * says which check failed, except that an unknown keyId, a wrong signature
 * and an address outside the key's allow-list answer alike (so key ids cannot
 * be enumerated); an unknown keyId costs one HMAC and one constant-time
 * comparison, as a known one does.
 */
export class ApiKeyVerifier {
  readonly #keys: Map<string, StoredKey>;
  readonly #skewMs: number;
  readonly #decoyKey = createSecretKey(randomBytes(32));
  /** The last X-NDA-Date read and its instant: clients sign with the current second, so most requests repeat it. */
  #lastDate: { text: string; millis: number | undefined } = { text: '', millis: undefined };

  constructor(keys: readonly ApiKey[], clockSkewSeconds: number) {
    this.#keys = new Map(
      keys.map((key) => [
        key.keyId,
        {
          keyId: key.keyId,
          hmacKey: createSecretKey(key.secret.reveal(), 'utf8'),
          principal: { name: key.name, permissions: new Set(key.permissions) },
          allowFrom: key.allowFrom ? addressList(key.allowFrom) : undefined,
          skewMs: (key.clockSkewSeconds ?? clockSkewSeconds) * 1000,
          singleWriter: key.singleWriter ?? false,
        },
      ]),
    );
    this.#skewMs = clockSkewSeconds * 1000;
  }

  get size(): number {
    return this.#keys.size;
  }

  verify(request: SignedRequest, now = Date.now()): SignatureCheck {
    const header = AUTHORIZATION.exec(request.authorization);
    if (!header)
      return refused(
        'MalformedSignatureHeader',
        'the Authorization header is not "NDA-HMAC-SHA256 KeyId=<key id>,Signature=<signature>", the signature being 43 base64 characters without padding',
      );
    if (request.date === '')
      return refused('DateMissing', 'a signed request needs an X-NDA-Date header: the time it was signed, yyyyMMddHHmmss in UTC');
    if (this.#lastDate.text !== request.date) this.#lastDate = { text: request.date, millis: parseNdaDate(request.date) };
    const signedAt = this.#lastDate.millis;
    if (signedAt === undefined)
      return refused(
        'DateInvalid',
        `X-NDA-Date ${JSON.stringify(request.date.slice(0, 40))} is not a time in the form yyyyMMddHHmmss (UTC)`,
      );
    const keyId = header[1]!;
    const presented = header[2]!;
    const key = this.#keys.get(keyId);
    // An unknown key is held to the default window: its answer must not differ from a known key's.
    const skewMs = key?.skewMs ?? this.#skewMs;
    if (Math.abs(now - signedAt) > skewMs) {
      const seconds = Math.round(Math.abs(now - signedAt) / 1000);
      return refused(
        'DateOutsideWindow',
        `X-NDA-Date ${request.date} is ${seconds} s ${signedAt < now ? 'behind' : 'ahead of'} the server's clock (${formatNdaDate(new Date(now))}); a signature is accepted up to ${skewMs / 1000} s either way`,
      );
    }
    if (request.host === undefined)
      return refused('HostMissing', 'the request names no host (Host header), and the signature covers the host name');
    const canonical = canonicalParts({
      host: request.host,
      method: request.method,
      rawPath: request.rawPath,
      rawQuery: request.rawQuery,
      date: request.date,
    });
    // The allow-list first: a request from elsewhere costs no HMAC.
    const allowed = key?.allowFrom === undefined || key.allowFrom.has(request.clientAddress);
    const matches =
      allowed &&
      timingSafeEqual(
        Buffer.from(ndaSignature(key?.hmacKey ?? this.#decoyKey, joinCanonical(canonical)), 'latin1'),
        Buffer.from(presented, 'latin1'),
      );
    if (!key || !matches) {
      const parts = `host ${JSON.stringify(canonical.host)} + method ${JSON.stringify(canonical.method)} + path ${JSON.stringify(canonical.path)} + query ${JSON.stringify(canonical.query)} + X-NDA-Date ${JSON.stringify(canonical.date)}`;
      return {
        ok: false,
        refusal: {
          reason: 'SignatureMismatch',
          why: !key ? 'UnknownKeyId' : !allowed ? 'AddressNotAllowed' : 'WrongSignature',
          detail: `the signature does not match key id ${JSON.stringify(keyId)}: the server signed ${parts} with that key's secret. Either the key id or its secret differs, the key may not be used from this address, or the client signed other parts (behind a proxy, the host is PUBLIC_HOST, or X-Forwarded-Host with TRUST_PROXY)`,
          canonical,
        },
      };
    }
    return {
      ok: true,
      verified: {
        principal: key.principal,
        keyId: key.keyId,
        signature: presented,
        expiresAt: signedAt + skewMs,
        singleWriter: key.singleWriter,
      },
    };
  }
}

function refused(reason: SignatureRefusalReason, detail: string): SignatureCheck {
  return { ok: false, refusal: { reason, detail } };
}
