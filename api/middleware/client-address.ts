import type { Middleware } from 'koa';
import type { AddressList } from '../../settings/address-list.ts';
import { resolveClientAddress } from '../client-address.ts';

/** Resolves the client's address once for every later middleware and handler (ctx.state.clientAddress). */
export function resolveClientAddresses(trustedProxies: AddressList | undefined): Middleware {
  return async function resolveClientAddresses(ctx, next) {
    ctx.state.clientAddress = resolveClientAddress(ctx.req, trustedProxies);
    await next();
  };
}
