import type { Config } from '../../config.ts';
import { generatedTokenFile } from '../auth/tokens.ts';

// Where a reader of /docs gets a token for Swagger UI's Authorize dialog,
// which shows each security scheme's description. Only this deployment
// knows: with no tokens configured, the first start generated an admin token
// into DATA_DIR (api/auth/tokens.ts), said where and never printed it.

export function tokenNote(config: Pick<Config, 'AUTH_DISABLED' | 'AUTH_TOKENS' | 'AUTH_TOKENS_FILE' | 'DATA_DIR'>): string | undefined {
  if (config.AUTH_DISABLED) return '**On this server** authentication is off (`AUTH_DISABLED=true`): any value is accepted.';
  const file = generatedTokenFile(config);
  if (file === undefined) return undefined;
  return [
    `**On this server** no \`AUTH_TOKENS\` are configured, so its first start (\`npm start\`) generated an admin token,`,
    `never printed, and keeps it in \`${file}\`, relative to the folder the service was started in`,
    `(the project folder, for \`npm start\`): \`cat ${file}\` shows it. Paste the token itself here, without "Bearer".`,
  ].join(' ');
}

/** Appends the note to every bearer security scheme of a served OpenAPI document. */
export function addTokenNote(document: Record<string, unknown>, note: string | undefined): void {
  if (note === undefined) return;
  const components = document.components as
    { securitySchemes?: Record<string, { type?: string; scheme?: string; description?: string }> } | undefined;
  for (const scheme of Object.values(components?.securitySchemes ?? {})) {
    if (scheme.type !== 'http' || scheme.scheme?.toLowerCase() !== 'bearer') continue;
    scheme.description = scheme.description ? `${scheme.description.trimEnd()}\n\n${note}` : note;
  }
}
