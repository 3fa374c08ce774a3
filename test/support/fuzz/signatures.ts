// HMAC credentials for the fuzzer: requests signed with the test keys, right
// or with one flaw, signed when sent (the path is final and the date fresh then),
// and NDA-HMAC-SHA256 headers that no signing produces.
import fc from 'fast-check';
import { TEST_KEYS } from '../harness.ts';
import { elzaDataToHash, elzaSignature, ndaDate, type TestKey } from '../nda-signer.ts';

const FLAWS = [
  'none',
  'stale',
  'ahead',
  'wrong-secret',
  'unknown-key',
  'other-path',
  'other-method',
  'port-in-host',
  'no-date',
  'junk-date',
  'truncated',
  'padded',
  'lowercase-scheme',
  'spaced',
  'two-signatures',
] as const;
type SignatureFlaw = (typeof FLAWS)[number];

export interface SignWith {
  key: TestKey;
  flaw: SignatureFlaw;
}

const KEYS = Object.values(TEST_KEYS);
export const validSignature: fc.Arbitrary<SignWith> = fc.constantFrom(...KEYS).map((key) => ({ key, flaw: 'none' }));
export const flawedSignature: fc.Arbitrary<SignWith> = fc.record({ key: fc.constantFrom(...KEYS), flaw: fc.constantFrom(...FLAWS) });

/** Authorization values in the HMAC scheme that are malformed whatever the date. */
export function malformedHmacHeaders(junk: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const keyId = TEST_KEYS.read.keyId;
  const base64 = 'A'.repeat(43);
  return fc.oneof(
    fc.constantFrom(
      'NDA-HMAC-SHA256',
      'NDA-HMAC-SHA256 ',
      'NDA-HMAC-SHA256 KeyId=',
      'NDA-HMAC-SHA256 KeyId=,Signature=',
      `NDA-HMAC-SHA256 KeyId=${keyId}`,
      `NDA-HMAC-SHA256 KeyId=${keyId},Signature=${base64}`,
      `NDA-HMAC-SHA256 Signature=${base64},KeyId=${keyId}`,
      `NDA-HMAC-SHA256 KeyId=${'k'.repeat(5000)},Signature=${base64}`,
      `NDA-HMAC-SHA256 KeyId=${keyId},Signature=${'A'.repeat(5000)}`,
      `NDA-HMAC-SHA256 KeyId=__proto__,Signature=${base64}`,
      `NDA-HMAC-SHA256 KeyId=constructor,Signature=${base64}`,
      'NDA-HMAC-SHA256 KeyId=\u00e9,Signature=\u00ff',
      `NDA-HMAC-SHA1 KeyId=${keyId},Signature=${base64}`,
      `NDA-HMAC-SHA256KeyId=${keyId},Signature=${base64}`,
    ),
    junk.map((value) => `NDA-HMAC-SHA256 ${value}`),
    junk.map((value) => `NDA-HMAC-SHA256 KeyId=${keyId},Signature=${value}`),
  );
}

/** Hostile X-NDA-Date values, sent beside whatever Authorization the request has. */
export const hostileNdaDate: fc.Arbitrary<string> = fc.constantFrom(
  '',
  '0',
  '20261123160502',
  '00000000000000',
  '99999999999999',
  '2026112316050',
  '202611231605021',
  '20261323160502',
  '20260230250000',
  '2026-11-23T16:05:02Z',
  'yesterday',
  '-20261123160502',
  '２０２６１１２３１６０５０２',
  '1'.repeat(5000),
);

/** The X-NDA-Date and Authorization headers of `sign` for a request as it goes on the wire. */
export function signatureHeaders(
  sign: SignWith,
  request: { method: string; pathAndQuery: string; host: string; port: string },
): Record<string, string> {
  const { key, flaw } = sign;
  const shift = flaw === 'stale' ? -600_000 : flaw === 'ahead' ? 600_000 : 0;
  const date = flaw === 'junk-date' ? 'yesterday' : ndaDate(new Date(Date.now() + shift));
  const host = flaw === 'port-in-host' ? `${request.host}:${request.port}` : request.host;
  const method = flaw === 'other-method' ? (request.method === 'GET' ? 'POST' : 'GET') : request.method;
  const pathAndQuery = flaw === 'other-path' ? `${request.pathAndQuery}x` : request.pathAndQuery;
  let signature = elzaSignature(
    flaw === 'wrong-secret' ? `${key.secret}x` : key.secret,
    elzaDataToHash({ host, method, pathAndQuery, date }),
  );
  if (flaw === 'truncated') signature = signature.slice(0, -2);
  if (flaw === 'padded') signature = `${signature}=`;
  const keyId = flaw === 'unknown-key' ? 'no-such-key' : key.keyId;
  const authorization =
    flaw === 'lowercase-scheme'
      ? `nda-hmac-sha256 KeyId=${keyId},Signature=${signature}`
      : flaw === 'spaced'
        ? `NDA-HMAC-SHA256  KeyId=${keyId} , Signature=${signature}`
        : flaw === 'two-signatures'
          ? `NDA-HMAC-SHA256 KeyId=${keyId},Signature=${signature},Signature=${signature}`
          : `NDA-HMAC-SHA256 KeyId=${keyId},Signature=${signature}`;
  return { ...(flaw === 'no-date' ? {} : { 'x-nda-date': date }), authorization };
}
