/**
 * The host name of a Host header value (`name[:port]`, `[v6]:port`) the way
 * OkHttp's `url.host()` gives it: lower case, IDN as punycode, IPv6 without
 * brackets; undefined when it is not a host.
 */
export function hostnameOf(hostHeader: string): string | undefined {
  if (hostHeader === '' || /[\s/\\?#@]/.test(hostHeader)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
  if (hostname === '') return undefined;
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}
