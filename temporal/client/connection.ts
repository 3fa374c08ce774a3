import { readFileSync } from 'node:fs';
import type { Config } from '../../config.ts';

// How the API and the worker reach Temporal beyond its address: TLS (a
// cluster's own CA, mutual TLS with a client certificate) and an API key
// (Temporal Cloud). One place, so that the client connections and the
// worker's native one are configured alike.

export interface TemporalConnectionOptions {
  tls?: {
    serverNameOverride?: string;
    serverRootCACertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
  };
  apiKey?: string;
}

type TemporalTlsConfig = Pick<
  Config,
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CA_FILE'
  | 'TEMPORAL_TLS_CERT_FILE'
  | 'TEMPORAL_TLS_KEY_FILE'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
  | 'TEMPORAL_API_KEY_FILE'
>;

/** The connection options of `config`: none for a plain local server. Files are read here, once, at start. */
export function temporalConnectionOptions(config: TemporalTlsConfig): TemporalConnectionOptions {
  const apiKey =
    config.TEMPORAL_API_KEY ?? (config.TEMPORAL_API_KEY_FILE ? readFileSync(config.TEMPORAL_API_KEY_FILE, 'utf8').trim() : undefined);
  const wantsTls = config.TEMPORAL_TLS || config.TEMPORAL_TLS_CA_FILE || config.TEMPORAL_TLS_CERT_FILE || apiKey !== undefined;
  if (!wantsTls) return {};
  const tls: NonNullable<TemporalConnectionOptions['tls']> = {};
  if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  if (config.TEMPORAL_TLS_CA_FILE) tls.serverRootCACertificate = readFileSync(config.TEMPORAL_TLS_CA_FILE);
  if (config.TEMPORAL_TLS_CERT_FILE && config.TEMPORAL_TLS_KEY_FILE) {
    tls.clientCertPair = { crt: readFileSync(config.TEMPORAL_TLS_CERT_FILE), key: readFileSync(config.TEMPORAL_TLS_KEY_FILE) };
  }
  return { tls, ...(apiKey === undefined ? {} : { apiKey }) };
}

/**
 * The channel arguments of the client connections (the worker's native one has its own): gRPC's reconnect backoff
 * grows to two minutes by default, so a client whose Temporal was away for minutes could go on failing for up to two
 * more after it came back (an export's confirmation of its file among them). Five seconds bounds that.
 */
const CLIENT_CHANNEL_ARGS = { 'grpc.max_reconnect_backoff_ms': 5_000 };

/** The options of a client connection (`Connection.lazy`) to the Temporal of `config`. */
export function temporalClientOptions(config: TemporalTlsConfig & Pick<Config, 'temporalAddress'>) {
  return { address: config.temporalAddress, ...temporalConnectionOptions(config), channelArgs: CLIENT_CHANNEL_ARGS };
}
