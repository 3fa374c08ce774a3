// The real system's public XSDs, read at test time from ../shared/reference/
// (never copied into the project), to prove that what the service emits is
// valid for clients that bind it with JAXB. Where the folder is absent, the
// tests that need it are skipped and say so.
import { existsSync } from 'node:fs';
import { loadEngine, type LoadedEngine } from '../../domain/validation/libxml2.ts';

export type PublicSchema = 'cam-2025.xsd' | 'cam-2019.xsd';

const REFERENCE_DIR = new URL('../../../shared/reference/', import.meta.url);
const FILES: readonly PublicSchema[] = ['cam-2025.xsd', 'cam-2019.xsd'];

/** Whether the reference XSDs are there; a test that needs them uses it.skipIf(!PUBLIC_XSD_AVAILABLE). */
export const PUBLIC_XSD_AVAILABLE = FILES.every((file) => existsSync(new URL(file, REFERENCE_DIR)));

if (!PUBLIC_XSD_AVAILABLE) {
  console.warn(`SKIPPED: validation against the public XSDs, ${REFERENCE_DIR.pathname} is absent`);
}

let loaded: Promise<LoadedEngine> | undefined;

/** The schema violations of `xml` against one public XSD; empty when it is valid. */
export async function publicXsdErrors(xml: string, schema: PublicSchema): Promise<string[]> {
  loaded ??= loadEngine(new Map(FILES.map((file) => [file, new URL(file, REFERENCE_DIR)] as const)));
  const { engine, schemas } = await loaded;
  const parsed = engine.parse([new TextEncoder().encode(xml)]);
  if (!parsed.ok) return parsed.errors.map((error) => `${error.line}:${error.column} ${error.message.trim()}`);
  try {
    return engine.validate(parsed.doc, schemas.get(schema)!, 50).errors.map((error) => `${error.line}:${error.column} ${error.message.trim()}`);
  } finally {
    engine.freeDoc(parsed.doc);
  }
}
