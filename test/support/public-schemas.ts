// The real registry's public XSDs (../shared/reference, or REFERENCE_DIR: a
// git worktree elsewhere has no ../shared), read at test time to prove that
// what the service emits is valid for the real clients. They are never copied
// into the project; where the folder is absent the tests that need them are
// skipped with a message saying so.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { XmlVersion } from '../../domain/model.ts';
import { loadEngine, type LoadedEngine } from '../../engine/validation/libxml2.ts';

/** The folder of the real registry's documents (the XSDs here, the v2 OpenAPI in real-client.ts). */
export const REFERENCE = process.env.REFERENCE_DIR
  ? pathToFileURL(`${process.env.REFERENCE_DIR.replace(/\/$/, '')}/`)
  : new URL('../../../shared/reference/', import.meta.url);
const FILES: Record<XmlVersion, URL> = {
  v2: new URL('cam-2025.xsd', REFERENCE),
  v1: new URL('cam-2019.xsd', REFERENCE),
};

export const PUBLIC_SCHEMAS_PRESENT = Object.values(FILES).every((file) => existsSync(file));

if (!PUBLIC_SCHEMAS_PRESENT) {
  console.warn(
    `SKIPPED: the public XSDs are not at ${fileURLToPath(REFERENCE)}; documents are not checked against the real registry's schemas`,
  );
}

let engine: Promise<LoadedEngine> | undefined;

/** Every violation of the public schema of `version` (empty: valid). */
export async function publicSchemaErrors(xml: string | Uint8Array, version: XmlVersion): Promise<string[]> {
  engine ??= loadEngine(new Map(Object.entries(FILES)));
  const loaded = await engine;
  const parsed = loaded.engine.parse([typeof xml === 'string' ? Buffer.from(xml) : xml]);
  if (!parsed.ok) return parsed.errors.map((error) => `line ${error.line}: ${error.message}`);
  try {
    const { errors } = loaded.engine.validate(parsed.doc, loaded.schemas.get(version)!, 20);
    return errors.map((error) => `line ${error.line}: ${error.message.trim()}`);
  } finally {
    loaded.engine.freeDoc(parsed.doc);
  }
}
