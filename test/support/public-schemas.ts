// The real registry's public XSDs (../shared/reference/, beside the checkout
// on CI), read at test time only: never copied into the project. A test that
// needs them says plainly that it was skipped when they are absent.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../domain/validation/libxml2.ts';

const REFERENCE_DIR = new URL('../../../shared/reference/', import.meta.url);

export const PUBLIC_SCHEMAS = {
  v2: new URL('cam-2025.xsd', REFERENCE_DIR),
  v1: new URL('cam-2019.xsd', REFERENCE_DIR),
} as const;

/** Why the public schemas cannot be used here, or undefined when they can. */
export function publicSchemasMissing(): string | undefined {
  const missing = Object.values(PUBLIC_SCHEMAS).filter((url) => !existsSync(url));
  return missing.length === 0 ? undefined : `public XSDs not found: ${missing.map((url) => fileURLToPath(url)).join(', ')}`;
}

export type PublicValidator = (xml: Uint8Array, version: keyof typeof PUBLIC_SCHEMAS) => string[];

/** Validates whole documents against the public XSDs; returns the schema errors ("line: message"). */
export async function publicValidator(): Promise<PublicValidator> {
  const { engine, schemas } = await loadEngine(new Map(Object.entries(PUBLIC_SCHEMAS)));
  return (xml, version) => {
    const parsed = engine.parse([xml]);
    if (!parsed.ok) return parsed.errors.map((error) => `${error.line}: ${error.message}`);
    try {
      return engine.validate(parsed.doc, schemas.get(version)!, 50).errors.map((error) => `${error.line}: ${error.message}`);
    } finally {
      engine.freeDoc(parsed.doc);
    }
  };
}
