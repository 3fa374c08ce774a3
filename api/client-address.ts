import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { addressList, plainAddress, type AddressList } from '../settings/address-list.ts';

// The address a request came from, for limits kept per source address
// (anonymous readers of record pages and OAI-PMH, failed authentication) and
// for the API keys' allow-lists. Taken from the connection; only when the
// connection comes from a proxy the operator lists (TRUSTED_PROXIES) is
// X-Forwarded-For read, from its right end: each trusted proxy appends the
// address it saw, so the first address from the right that is not a trusted
// proxy is the client. A header an untrusted peer sent never decides it.
// With PROXY_PROTOCOL on, the connection's address is the source a trusted
// proxy's PROXY header named (api/proxy-protocol.ts sets it on the socket);
// X-Forwarded-For is then read only when that source is itself a trusted
// proxy (a proxy chain), as for any other connection.

/** The client's address for `req`, given the trusted proxies (none: the connection's address). */
export function resolveClientAddress(req: IncomingMessage, trustedProxies: AddressList | undefined): string {
  const peer = plainAddress(req.socket.remoteAddress ?? 'unknown');
  if (trustedProxies === undefined || !trustedProxies.has(peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => plainAddress(hop.trim()))
    .filter(Boolean);
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    if (!trustedProxies.has(hops[index]!)) return hops[index]!;
  }
  // Every hop a trusted proxy (or none given): the farthest one is as near the client as can be known.
  return hops[0] ?? peer;
}

/** The client's address as resolved for this request (by the app's first middleware), else the connection's. */
export function clientAddress(ctx: Context): string {
  return (ctx.state.clientAddress as string | undefined) ?? plainAddress(ctx.req.socket.remoteAddress ?? 'unknown');
}

/** TRUSTED_PROXIES as a list; undefined when none are configured. */
export function trustedProxyList(config: Pick<Config, 'TRUSTED_PROXIES'>): AddressList | undefined {
  return config.TRUSTED_PROXIES.length === 0 ? undefined : addressList(config.TRUSTED_PROXIES);
}
