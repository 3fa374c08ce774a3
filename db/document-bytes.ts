// How entity.document_bytes holds a stored document: its UTF-8 bytes, one
// character a byte (Migration20261127000100EntityDocumentBytes says why).

/** The UTF-8 bytes of a document's text, one character a byte (`latin1`). */
export function documentBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

