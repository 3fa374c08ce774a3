// The OAI-PMH 2.0 response schema, as the PyPI package pyoai ships it in its
// source distribution (taken once into .venv/share/ by the project's own
// venv script, never at request time), and a check of responses against it.
import { pathToFileURL } from 'node:url';
import { loadEngine, type LoadedEngine } from '../../engine/validation/libxml2.ts';
import { ensureVenvSdistFile } from '../../scripts/lib/venv.ts';

const PYOAI_VERSION = '2.5.0';

let engine: Promise<LoadedEngine> | undefined;

/** Every violation of OAI-PMH.xsd by a response (empty: valid). Metadata is not checked by it (its content is `processContents="skip"`). */
export async function oaiSchemaErrors(xml: string): Promise<string[]> {
  engine ??= loadEngine(new Map([['oai', pathToFileURL(ensureVenvSdistFile('pyoai', PYOAI_VERSION, 'src/oaipmh/tests/OAI-PMH.xsd'))]]));
  const loaded = await engine;
  const parsed = loaded.engine.parse([Buffer.from(xml)]);
  if (!parsed.ok) return parsed.errors.map((error) => `line ${error.line}: ${error.message}`);
  try {
    return loaded.engine
      .validate(parsed.doc, loaded.schemas.get('oai')!, 20)
      .errors.map((error) => `line ${error.line}: ${error.message.trim()}`);
  } finally {
    loaded.engine.freeDoc(parsed.doc);
  }
}
