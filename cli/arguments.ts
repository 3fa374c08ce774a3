import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { apiClient, type ApiClient } from './client.ts';
import { CliError, EXIT } from './errors.ts';

// Argument parsers (a bad value is a usage error, exit 2) and what every
// command takes from the global options.

const ENTITY_ID = /^[1-9][0-9]{0,15}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An entity number or UUID, as the API's EntityId. */
export function entityId(value: string): string {
  if (ENTITY_ID.test(value) || UUID.test(value)) return value;
  throw new InvalidArgumentError('must be an entity number or a UUID');
}

export function uuid(value: string): string {
  if (UUID.test(value)) return value;
  throw new InvalidArgumentError('must be a UUID');
}

export function integer(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (/^\d+$/.test(value) && parsed >= min && parsed <= max) return parsed;
    throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
  };
}

export function httpUrl(value: string): string {
  if (URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)) return value;
  throw new InvalidArgumentError('must be an http:// or https:// URL');
}

export function clientOf(command: Command): ApiClient {
  const { url, token, keyId, keySecret } = command.optsWithGlobals<{ url: string; token?: string; keyId?: string; keySecret?: string }>();
  if ((keyId === undefined) !== (keySecret === undefined))
    throw new CliError(
      EXIT.usage,
      'an API key needs both --key-id and --key-secret (or ENTITY_RECORDS_KEY_ID and ENTITY_RECORDS_KEY_SECRET)',
    );
  // A key given on purpose wins over a token left in the environment.
  const source = command.getOptionValueSourceWithGlobals('url');
  const urlFrom = source === 'env' ? 'env' : source === 'cli' ? 'cli' : 'default';
  return apiClient({
    url,
    urlFrom,
    ...(keyId !== undefined && keySecret !== undefined ? { key: { keyId, secret: keySecret } } : { token }),
  });
}

export async function readInputFile(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new CliError(EXIT.usage, `cannot read ${file}: ${(error as Error).message}`);
  }
}
