import type { IncomingMessage } from 'node:http';
import type { Config } from '../config.ts';
import { plainAddress, type AddressList } from '../settings/address-list.ts';
import { trustedProxyList } from './client-address.ts';

// X-Forwarded-Host and X-Forwarded-Proto say which address a client called
// when a reverse proxy stands between it and the API (the host it signed,
// the origin of a sign-in form, whether it came over https). Any client can
// send them, so they are believed only with TRUST_PROXY on (the operator says
// the proxies set them) and only on a connection from a peer in
// TRUSTED_PROXIES: a client that reaches the port past the proxy is not
// believed. Of a list, the first value counts (the outermost proxy's).

export interface ForwardedTrust {
  trustProxy: boolean;
  trustedProxies: AddressList | undefined;
}

export function forwardedTrust(config: Pick<Config, 'TRUST_PROXY' | 'TRUSTED_PROXIES'>): ForwardedTrust {
  return { trustProxy: config.TRUST_PROXY, trustedProxies: trustedProxyList(config) };
}

/** X-Forwarded-Host or -Proto as the request's peer may say it: its first value, else ''. */
export function forwardedHeader(req: IncomingMessage, name: 'host' | 'proto', trust: ForwardedTrust): string {
  if (!trust.trustProxy || trust.trustedProxies === undefined) return '';
  if (!trust.trustedProxies.has(plainAddress(req.socket.remoteAddress ?? ''))) return '';
  const header = req.headers[`x-forwarded-${name}`];
  return (Array.isArray(header) ? (header[0] ?? '') : (header ?? '')).split(',')[0]!.trim();
}
