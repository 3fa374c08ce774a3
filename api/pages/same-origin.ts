import type { Context } from 'koa';
import type { Config } from '../../config.ts';
import { forwardedHeader, forwardedTrust } from '../forwarded.ts';
import { PageError } from './respond.ts';

// A form's POST (sign-in, sign-out) must come from one of our own pages: its
// Origin (every browser sends one with a POST) must be, scheme, host and port
// alike, this request's own origin (as a trusted proxy names it, through
// X-Forwarded-Host and -Proto: api/forwarded.ts), or PUBLIC_HOST's origin,
// https://PUBLIC_HOST with its port (behind a proxy that ends TLS and rewrites
// Host). With the SameSite cookie this keeps other sites, and other services
// on the same host name, from signing a person in or out.

export type SameOriginCheck = (ctx: Context) => { https: boolean };

export function sameOriginCheck(config: Pick<Config, 'TRUST_PROXY' | 'TRUSTED_PROXIES' | 'publicOrigin'>): SameOriginCheck {
  const trust = forwardedTrust(config);
  return function checkSameOrigin(ctx) {
    const origin = originOf(ctx.get('origin'));
    const https = ctx.protocol === 'https' || forwardedHeader(ctx.req, 'proto', trust).toLowerCase() === 'https';
    const own = originOf(`${https ? 'https' : 'http'}://${forwardedHeader(ctx.req, 'host', trust) || ctx.get('host')}`);
    if (origin === undefined || (origin !== own && origin !== config.publicOrigin)) {
      throw new PageError(
        403,
        'Form refused',
        'This form was not sent from this service\u2019s own page. Open the page again and send the form from there.',
      );
    }
    // The session cookie is Secure whenever the form came over https, as its Origin says, also behind a proxy that ends TLS.
    return { https: https || origin.startsWith('https:') };
  };
}

/** The serialised origin of an http(s) URL (lower case, default port left out); undefined for anything else ('null' included). */
function originOf(url: string): string | undefined {
  if (!/^https?:\/\/[^/?#\\@\s]+$/i.test(url) || !URL.canParse(url)) return undefined;
  return new URL(url).origin;
}
