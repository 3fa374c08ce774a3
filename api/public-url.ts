import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { plainAddress } from './address-list.ts';
import { trustedProxyList } from './client-address.ts';

// The URL clients reach the service at, for links the service writes into
// its answers (OAI-PMH's baseURL and schema URLs): PUBLIC_URL when the
// operator set it (scheme, host, port and path); else, for a request whose
// connection comes from a proxy in TRUSTED_PROXIES, the scheme and host that
// proxy names in X-Forwarded-Proto and X-Forwarded-Host; else the request's
// own scheme and Host. A forwarded header from any other peer never decides
// it, so a client cannot make the service write links to a host it chose.

/** A scheme and host[:port] as a proxy forwards them; anything else is ignored. */
const FORWARDED_PROTO = /^https?$/;
const FORWARDED_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/;

export type PublicUrlSettings = Pick<Config, 'PUBLIC_URL' | 'TRUSTED_PROXIES'>;

/** The public base URL for `ctx`, without a trailing slash: PUBLIC_URL, a trusted proxy's forwarded scheme and host, or the request's. */
export function publicBaseUrl(ctx: Context, config: PublicUrlSettings): string {
  if (config.PUBLIC_URL !== undefined) return config.PUBLIC_URL;
  const trusted = trustedProxies(config);
  const peer = plainAddress(ctx.req.socket.remoteAddress ?? 'unknown');
  if (trusted?.has(peer)) {
    const proto = lastHop(ctx.get('x-forwarded-proto'));
    const host = lastHop(ctx.get('x-forwarded-host'));
    const scheme = proto !== undefined && FORWARDED_PROTO.test(proto) ? proto : ctx.protocol;
    const authority = host !== undefined && FORWARDED_HOST.test(host) ? host : ctx.host;
    return `${scheme}://${authority}`;
  }
  return `${ctx.protocol}://${ctx.host}`;
}

/** The nearest proxy's value of a header proxies may append to (a, b: b is the one the trusted peer set). */
function lastHop(header: string): string | undefined {
  const hops = header
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean);
  return hops.at(-1);
}

const lists = new WeakMap<readonly string[], ReturnType<typeof trustedProxyList>>();

function trustedProxies(config: PublicUrlSettings): ReturnType<typeof trustedProxyList> {
  if (!lists.has(config.TRUSTED_PROXIES)) lists.set(config.TRUSTED_PROXIES, trustedProxyList(config));
  return lists.get(config.TRUSTED_PROXIES);
}
