// The official EAC-CPF 2.0 schema (../shared/reference/eac-cpf-2.0/eac.xsd,
// or under REFERENCE_DIR), read at test time to prove that every EAC-CPF
// document the service writes is valid. It is never copied into the
// project; where it is absent the tests that need it are skipped, and say so.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine, type LoadedEngine } from '../../engine/validation/libxml2.ts';
import { REFERENCE } from './public-schemas.ts';

const FILE = new URL('eac-cpf-2.0/eac.xsd', REFERENCE);

export const EAC_CPF_SCHEMA_PRESENT = existsSync(FILE);

if (!EAC_CPF_SCHEMA_PRESENT) {
  console.warn(`SKIPPED: the EAC-CPF 2.0 schema is not at ${fileURLToPath(FILE)}; EAC-CPF documents are not checked against it`);
}

let engine: Promise<LoadedEngine> | undefined;

/** Every violation of the EAC-CPF 2.0 schema in one document (empty: valid). */
export async function eacCpfSchemaErrors(xml: string): Promise<string[]> {
  engine ??= loadEngine(new Map([['eac', FILE]]));
  const loaded = await engine;
  const parsed = loaded.engine.parse([Buffer.from(xml)]);
  if (!parsed.ok) return parsed.errors.map((error) => `line ${error.line}: ${error.message}`);
  try {
    const { errors } = loaded.engine.validate(parsed.doc, loaded.schemas.get('eac')!, 20);
    return errors.map((error) => `line ${error.line}: ${error.message.trim()}`);
  } finally {
    loaded.engine.freeDoc(parsed.doc);
  }
}

/** The `eac` records of an export file, each as a document of its own. */
export function eacRecordsOf(file: string): string[] {
  return [...file.matchAll(/<eac [\s\S]*?<\/eac>/g)].map((match) => match[0]);
}
