import { z } from 'zod';
import { RedactedSecret } from '../secrets.ts';
import { addressList } from './address-list.ts';
import { PERMISSIONS, type Permission } from './permissions.ts';

const MIN_SECRET_LENGTH = 32;

const apiKeyEntrySchema = z.strictObject({
  name: z.string().min(1),
  // The Authorization header separates its parameters with commas.
  keyId: z.string().regex(/^[\x21-\x2b\x2d-\x7e]{1,200}$/, 'printable ASCII without spaces or commas'),
  secret: z.string().min(MIN_SECRET_LENGTH, `at least ${MIN_SECRET_LENGTH} characters`),
  permissions: z.array(z.enum(PERMISSIONS)).min(1),
  /** Source addresses (CIDRs, or single addresses) the key may be used from; absent: any. */
  allowFrom: z.array(z.string()).min(1).optional(),
  /** How far this key's X-NDA-Date may lie from the server's clock; default API_KEY_CLOCK_SKEW_SECONDS. */
  clockSkewSeconds: z.number().int().min(1).max(3600).optional(),
  /** Refuse a write that reuses an earlier write's signature with another body (docs/decisions/0144); default false. */
  singleWriter: z.boolean().optional(),
});

export interface ApiKey {
  /** The principal recorded on batches and in logs. */
  name: string;
  keyId: string;
  secret: RedactedSecret;
  permissions: Permission[];
  allowFrom?: string[];
  clockSkewSeconds?: number;
  singleWriter?: boolean;
}

/**
 * The keys of `API_KEYS` (or of the file `API_KEYS_FILE`); a malformed entry,
 * a short secret or a keyId used twice is refused with a message that names
 * the entry (its number, name and keyId, never its secret).
 */
export function parseApiKeys(json: string, source: string): ApiKey[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error(`${source} is not valid JSON`);
  }
  if (!Array.isArray(value)) throw new Error(`${source} must be a JSON array of {"name", "keyId", "secret", "permissions"}`);
  const entryOfKeyId = new Map<string, number>();
  return value.map((entry: unknown, index) => {
    const label = `${source} entry ${index + 1}${identify(entry)}`;
    const parsed = apiKeyEntrySchema.safeParse(entry);
    if (!parsed.success)
      throw new Error(`${label}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'entry'}: ${issue.message}`).join('; ')}`);
    const earlier = entryOfKeyId.get(parsed.data.keyId);
    if (earlier !== undefined) throw new Error(`${label}: keyId is already used by entry ${earlier}`);
    entryOfKeyId.set(parsed.data.keyId, index + 1);
    if (parsed.data.allowFrom) {
      try {
        addressList(parsed.data.allowFrom);
      } catch (error) {
        throw new Error(`${label}: allowFrom: ${(error as Error).message}`, { cause: error });
      }
    }
    return { ...parsed.data, secret: new RedactedSecret(parsed.data.secret) };
  });
}

/** ` (name "…", keyId "…")` from whatever of the two an entry has as strings. */
function identify(entry: unknown): string {
  if (typeof entry !== 'object' || entry === null) return '';
  const { name, keyId } = entry as Record<string, unknown>;
  const parts = [
    typeof name === 'string' ? `name ${JSON.stringify(name.slice(0, 80))}` : '',
    typeof keyId === 'string' ? `keyId ${JSON.stringify(keyId.slice(0, 80))}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}
