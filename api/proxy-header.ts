import { isIP } from 'node:net';

// The PROXY protocol header a proxy sends before the client's bytes, as
// HAProxy's specification defines it: version 1 (one text line) and
// version 2 (binary), for TCP over IPv4 and IPv6, and LOCAL / UNKNOWN (the
// proxy's own connection: its addresses are the connection's). Only the
// source address is taken; v2's TLVs are skipped with the rest of its
// length. What the proxy forwarded after the header is the caller's.

/** The client the proxy names; undefined for LOCAL, UNKNOWN or an unspecified family: the connection's own addresses stand. */
export interface ProxySource {
  address: string;
  port: number;
  family: 'IPv4' | 'IPv6';
}

type ProxyHeader =
  /** Too few bytes yet to tell. */
  | { kind: 'incomplete' }
  /** The bytes do not begin with a PROXY header. */
  | { kind: 'absent' }
  | { kind: 'malformed'; problem: string }
  /** A header of `length` bytes. */
  | { kind: 'header'; length: number; source: ProxySource | undefined };

const V1_SIGNATURE = Buffer.from('PROXY ', 'latin1');
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** The longest v1 line, CRLF included (the specification's worst case, TCP6). */
const V1_MAX_LENGTH = 107;
const V2_FIXED_LENGTH = 16;
const PORT = /^(0|[1-9]\d{0,4})$/;

/** The PROXY header at the start of `bytes`, as far as they go. */
export function parseProxyHeader(bytes: Buffer): ProxyHeader {
  if (bytes.length === 0) return { kind: 'incomplete' };
  if (startsLike(bytes, V2_SIGNATURE)) return bytes.length < V2_FIXED_LENGTH ? { kind: 'incomplete' } : parseV2(bytes);
  if (startsLike(bytes, V1_SIGNATURE)) return bytes.length < V1_SIGNATURE.length ? { kind: 'incomplete' } : parseV1(bytes);
  return { kind: 'absent' };
}

/** Whether `bytes` and `signature` agree as far as both go. */
function startsLike(bytes: Buffer, signature: Buffer): boolean {
  const length = Math.min(bytes.length, signature.length);
  return bytes.compare(signature, 0, length, 0, length) === 0;
}

function parseV1(bytes: Buffer): ProxyHeader {
  const end = bytes.subarray(0, V1_MAX_LENGTH).indexOf('\r\n');
  if (end === -1) {
    return bytes.length >= V1_MAX_LENGTH ? { kind: 'malformed', problem: `no CRLF within ${V1_MAX_LENGTH} bytes` } : { kind: 'incomplete' };
  }
  const length = end + 2;
  const fields = bytes.toString('latin1', 0, end).split(' ');
  // UNKNOWN: whatever follows it up to the CRLF is ignored.
  if (fields[1] === 'UNKNOWN') return { kind: 'header', length, source: undefined };
  const family = fields[1] === 'TCP4' ? 4 : fields[1] === 'TCP6' ? 6 : 0;
  if (family === 0) return { kind: 'malformed', problem: 'v1: the protocol is none of TCP4, TCP6, UNKNOWN' };
  const [, , source = '', destination = '', sourcePort = '', destinationPort = ''] = fields;
  // A zone index (fe80::1%eth0) is nothing a client on another machine can have.
  const plain = (address: string) => isIP(address) === family && !address.includes('%');
  if (fields.length !== 6 || !plain(source) || !plain(destination)) {
    return { kind: 'malformed', problem: `v1: not "PROXY TCP${family} source destination sourcePort destinationPort"` };
  }
  if (![sourcePort, destinationPort].every((port) => PORT.test(port) && Number(port) <= 65535)) {
    return { kind: 'malformed', problem: 'v1: a port is not a number from 0 to 65535' };
  }
  return {
    kind: 'header',
    length,
    source: { ...(family === 4 ? { address: source, family: 'IPv4' } : ipv6Source(source)), port: Number(sourcePort) },
  };
}

function parseV2(bytes: Buffer): ProxyHeader {
  const versionAndCommand = bytes[12]!;
  if (versionAndCommand >> 4 !== 2) return { kind: 'malformed', problem: 'v2: the version is not 2' };
  const command = versionAndCommand & 0x0f;
  if (command > 1) return { kind: 'malformed', problem: 'v2: the command is neither LOCAL nor PROXY' };
  const length = V2_FIXED_LENGTH + bytes.readUInt16BE(14);
  if (bytes.length < length) return { kind: 'incomplete' };
  // LOCAL: the proxy's own connection (a health check); the address block, if any, is to be ignored.
  if (command === 0) return { kind: 'header', length, source: undefined };
  const family = bytes[13]! >> 4;
  const transport = bytes[13]! & 0x0f;
  // UNSPEC: the proxy does not know the source; the connection's addresses stand.
  if (family === 0) return { kind: 'header', length, source: undefined };
  if ((family !== 1 && family !== 2) || transport !== 1) {
    return { kind: 'malformed', problem: 'v2: not TCP over IPv4 or IPv6 (UNIX sockets and datagrams are not served here)' };
  }
  const addressBytes = family === 1 ? 4 : 16;
  if (length < V2_FIXED_LENGTH + addressBytes * 2 + 4)
    return { kind: 'malformed', problem: 'v2: the length is shorter than the addresses' };
  const source = bytes.subarray(V2_FIXED_LENGTH, V2_FIXED_LENGTH + addressBytes);
  const port = bytes.readUInt16BE(V2_FIXED_LENGTH + addressBytes * 2);
  if (family === 1) return { kind: 'header', length, source: { address: source.join('.'), family: 'IPv4', port } };
  const groups = Array.from({ length: 8 }, (_, index) => source.readUInt16BE(index * 2).toString(16));
  return { kind: 'header', length, source: { ...ipv6Source(groups.join(':')), port } };
}

/**
 * An IPv6 address as a socket names it (compressed, lower case), so that one
 * client is one key of the per-address limits however its proxy wrote it;
 * an IPv4-mapped one as the IPv4 address it is.
 */
function ipv6Source(address: string): Pick<ProxySource, 'address' | 'family'> {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped === null) return { address: canonical, family: 'IPv6' };
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return { address: [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.'), family: 'IPv4' };
}
