import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.ts';
import { sha256, type Principal, type TokenRegistry } from '../auth/tokens.ts';

// The record pages' sign-in session: a cookie that names the token a person
// signed in with (by a keyed digest of it, never the token) and when the
// session ends, signed with a secret every API process shares
// (RECORD_PAGES_SESSION_SECRET, else one derived from the force keys' secret,
// which every API of a deployment already shares). Any process can check it and nothing is
// kept in memory or in the database. The token's permissions are read again
// on every request, so a token removed from the configuration ends its
// sessions at the next restart of the processes.

export const SESSION_COOKIE = 'records_session';
/** The cookie is sent to the record pages only. */
const COOKIE_PATH = '/global';
/** The bytes of a token's keyed digest the cookie carries: enough to tell any two tokens apart. */
const TOKEN_KEY_BYTES = 16;

export interface SessionSigner {
  /** The cookie value of a new session for a token, and its lifetime in seconds. */
  issue(token: string, now?: Date): { value: string; maxAgeSeconds: number };
  /** The principal of a valid, unexpired cookie value; undefined for anything else. */
  principalOf(value: string | undefined, now?: Date): Principal | undefined;
}

/** RECORD_PAGES_SESSION_SECRET, else a key of its own derived from the force keys' secret (FORCE_KEY_SECRET or DATA_DIR's). */
export function sessionSecret(config: Pick<Config, 'RECORD_PAGES_SESSION_SECRET' | 'forceKeySecret'>): string {
  return (
    config.RECORD_PAGES_SESSION_SECRET ?? createHmac('sha256', config.forceKeySecret).update('record-pages-session').digest('base64url')
  );
}

export function sessionSigner(tokens: TokenRegistry, secret: string, hours: number): SessionSigner {
  const mac = (purpose: string, text: string | Buffer) => createHmac('sha256', secret).update(purpose).update('\0').update(text).digest();
  const tokenKey = (digest: Buffer) => mac('token', digest).subarray(0, TOKEN_KEY_BYTES).toString('base64url');
  const principals = new Map(tokens.digests().map(({ sha256: digest, principal }) => [tokenKey(digest), principal]));
  const maxAgeSeconds = Math.round(hours * 3600);
  return {
    issue(token, now = new Date()) {
      const key = tokenKey(sha256(token));
      const expires = Math.floor(now.getTime() / 1000) + maxAgeSeconds;
      return { value: `${key}.${expires}.${mac('session', `${key}.${expires}`).toString('base64url')}`, maxAgeSeconds };
    },
    principalOf(value, now = new Date()) {
      const match = value === undefined ? null : /^([\w-]{1,64})\.(\d{1,12})\.([\w-]{43})$/.exec(value);
      if (match === null) return undefined;
      const [, key, expires, signature] = match as unknown as [string, string, string, string];
      const expected = mac('session', `${key}.${expires}`);
      if (!timingSafeEqual(Buffer.from(signature, 'base64url'), expected)) return undefined;
      if (Number(expires) * 1000 <= now.getTime()) return undefined;
      return principals.get(key);
    },
  };
}

/**
 * The Set-Cookie of a session (or of its end, maxAgeSeconds 0): HttpOnly, so
 * no script reads it; SameSite=Lax, so a person who follows a link to a record
 * from another site (the registry's client) arrives signed in, while no other
 * site's form or script request carries it; Secure over https.
 */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
