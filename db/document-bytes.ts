// How entity.document_bytes and entity.eac_cpf hold what is stored beside a
// record: its UTF-8 bytes, one character a byte
// (Migration20261127000100EntityDocumentBytes says why).

import { storedEacCpfElement } from '../domain/eac-cpf/stored.ts';
import type { EntityRecord } from '../domain/model.ts';
import { serializeEntity } from '../domain/xml/index.ts';

/** The UTF-8 bytes of a document's text, one character a byte (`latin1`). */
function documentBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * The record's v2 document, stored beside it for GET (the bytes the GET would
 * build, Migration20261125000100EntityDocument) as its UTF-8 bytes, one
 * character a byte (Migration20261127000100EntityDocumentBytes); NULL for a
 * record the writer refuses, whose GET builds it and meets the same error.
 */
export function storedDocument(record: EntityRecord): string | null {
  try {
    return documentBytes(serializeEntity(record, 'v2'));
  } catch {
    return null;
  }
}

/**
 * The record's EAC-CPF element with the marks of its context
 * (domain/eac-cpf/stored.ts), stored beside it for exports
 * (Migration20261129000200EntityEacCpf) in the same form; NULL where it is
 * written at export time (a record whose JSON text `json` holds a mark, or one
 * the writer refuses).
 */
export function storedEacCpf(record: EntityRecord, json: string): string | null {
  try {
    const element = storedEacCpfElement(record, json);
    return element === undefined ? null : documentBytes(element);
  } catch {
    return null;
  }
}
