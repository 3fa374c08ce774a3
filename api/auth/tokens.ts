import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';

export const PERMISSIONS = ['read', 'write', 'force', 'export', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface Principal {
  name: string;
  permissions: ReadonlySet<Permission>;
}

const tokenEntrySchema = z
  .object({
    token: z.string().min(16).optional(),
    tokenSha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    name: z.string().min(1),
    permissions: z.array(z.enum(PERMISSIONS)).min(1),
  })
  .refine((entry) => (entry.token === undefined) !== (entry.tokenSha256 === undefined), 'give exactly one of token or tokenSha256');
const tokenListSchema = z.array(tokenEntrySchema);

interface StoredToken {
  sha256: Buffer;
  principal: Principal;
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Tokens kept only as hashes; a presented token is compared against every one in constant time. */
export class TokenRegistry {
  readonly #tokens: StoredToken[];

  constructor(entries: z.infer<typeof tokenListSchema>) {
    this.#tokens = entries.map((entry) => ({
      sha256: entry.token !== undefined ? sha256(entry.token) : Buffer.from(entry.tokenSha256!, 'hex'),
      principal: { name: entry.name, permissions: new Set(entry.permissions) },
    }));
  }

  get size(): number {
    return this.#tokens.length;
  }

  authenticate(token: string): Principal | undefined {
    const presented = sha256(token);
    let found: Principal | undefined;
    for (const stored of this.#tokens) {
      if (timingSafeEqual(stored.sha256, presented)) found = stored.principal;
    }
    return found;
  }

  static parse(json: string, source: string): TokenRegistry {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      throw new Error(`${source} is not valid JSON`);
    }
    const parsed = tokenListSchema.safeParse(value);
    if (!parsed.success) throw new Error(`${source}: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
    return new TokenRegistry(parsed.data);
  }
}

export interface TokenSources {
  AUTH_TOKENS?: string;
  AUTH_TOKENS_FILE?: string;
  DATA_DIR: string;
}

/**
 * The configured tokens; with none configured, a random admin token kept in
 * DATA_DIR (created on first start and announced once), so the embedded
 * default never runs open.
 */
export function loadTokens(sources: TokenSources, announce: (line: string) => void): TokenRegistry {
  if (sources.AUTH_TOKENS) return TokenRegistry.parse(sources.AUTH_TOKENS, 'AUTH_TOKENS');
  if (sources.AUTH_TOKENS_FILE) return TokenRegistry.parse(readFileSync(sources.AUTH_TOKENS_FILE, 'utf8'), sources.AUTH_TOKENS_FILE);
  const file = join(resolve(sources.DATA_DIR, 'secrets'), 'admin-token');
  if (!existsSync(file)) {
    mkdirSync(resolve(sources.DATA_DIR, 'secrets'), { recursive: true, mode: 0o700 });
    const token = randomBytes(24).toString('base64url');
    try {
      writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
      announce(`no AUTH_TOKENS configured: created an admin token (kept in ${file}, shown only now): ${token}`);
    } catch {
      // Created concurrently by another process: theirs is the token.
    }
  }
  const token = readFileSync(file, 'utf8').trim();
  return new TokenRegistry([{ token, name: 'admin', permissions: ['admin'] }]);
}
