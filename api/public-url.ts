import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { forwardedHeader, forwardedTrust, type ForwardedTrust } from './forwarded.ts';

// The URL clients reach the service at, for links the service writes into
// its answers (OAI-PMH's baseURL and schema URLs, EAC-CPF's record links):
// PUBLIC_URL when the operator set it (scheme, host, port and path); else the
// scheme and host a trusted proxy forwards (api/forwarded.ts: TRUST_PROXY and
// a peer in TRUSTED_PROXIES, the one rule for X-Forwarded-Host and -Proto);
// else the request's own scheme and Host. A forwarded header from any other
// peer never decides it, so a client cannot make the service write links to
// a host it chose.

/** A scheme and host[:port] as a proxy forwards them; anything else is ignored. */
const FORWARDED_PROTO = /^https?$/;
const FORWARDED_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/;

export type PublicUrlSettings = Pick<Config, 'PUBLIC_URL' | 'TRUST_PROXY' | 'TRUSTED_PROXIES'>;

/** The public base URL for `ctx`, without a trailing slash: PUBLIC_URL, a trusted proxy's forwarded scheme and host, or the request's. */
export function publicBaseUrl(ctx: Context, config: PublicUrlSettings): string {
  if (config.PUBLIC_URL !== undefined) return config.PUBLIC_URL;
  const trust = trustOf(config);
  const proto = forwardedHeader(ctx.req, 'proto', trust);
  const host = forwardedHeader(ctx.req, 'host', trust);
  const scheme = FORWARDED_PROTO.test(proto) ? proto : ctx.protocol;
  const authority = FORWARDED_HOST.test(host) ? host : ctx.host;
  return `${scheme}://${authority}`;
}

const trusts = new WeakMap<PublicUrlSettings, ForwardedTrust>();

function trustOf(config: PublicUrlSettings): ForwardedTrust {
  if (!trusts.has(config)) trusts.set(config, forwardedTrust(config));
  return trusts.get(config)!;
}
