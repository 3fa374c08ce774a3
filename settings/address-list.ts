import { BlockList, isIP } from 'node:net';

// Address lists (CIDRs or single addresses, IPv4 and IPv6): a key's
// allowFrom, the trusted proxies. An IPv4 client seen on an IPv6 socket
// (::ffff:10.0.0.1) is matched as the IPv4 address it is.

export interface AddressList {
  has(address: string): boolean;
}

/** The list of `entries`; throws naming the first entry that is neither an address nor a CIDR. */
export function addressList(entries: readonly string[]): AddressList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.trim().split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (
      family === 0 ||
      !Number.isInteger(bits) ||
      bits < 0 ||
      bits > (family === 6 ? 128 : 32) ||
      (prefix !== undefined && !/^\d+$/.test(prefix))
    ) {
      throw new Error(`${JSON.stringify(entry)} is neither an address nor a CIDR (10.0.0.0/8, 2001:db8::/32)`);
    }
    list.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    has(candidate) {
      const address = plainAddress(candidate);
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/** The address without an IPv4-mapped IPv6 prefix. */
export function plainAddress(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}
