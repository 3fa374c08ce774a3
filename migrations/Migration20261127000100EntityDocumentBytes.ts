import { Migration } from '@mikro-orm/migrations';

// The stored v2 document (Migration20261125000100EntityDocument) is kept as
// its UTF-8 bytes, one character a byte: a text column whose characters are
// all below U+0100, the document's bytes read as Latin-1 (`document_bytes`).
//
// Why: GET sends the document as stored, and Node handles a string whose
// characters all fit in one byte far more cheaply than the document's text,
// which holds a few characters beyond U+00FF (Czech names) and so becomes a
// two-byte string. Decoding the driver's UTF-8 into that string, measuring
// it and encoding it back to UTF-8 for the socket cost a bare HTTP server
// 20-25 µs a response on the bench machine, about as much as all the rest of
// its work (docs/decisions/0006). A one-byte string is written
// as `latin1`, a copy. PostgreSQL sends the column as it is: no conversion
// per read (converting in the SELECT cost PostgreSQL nearly as much as it
// saved Node). An ASCII document is the same in both forms, so only
// documents beyond ASCII are rewritten here.
export class Migration20261127000100EntityDocumentBytes extends Migration {
  override name = 'Migration20261127000100EntityDocumentBytes';

  override up(): void {
    this.addSql(`alter table entity rename column document to document_bytes`);
    this.addSql(`
      create or replace function entity_document_stale() returns trigger language plpgsql as $$
      begin
        new.document_bytes := null;
        return new;
      end $$`);
    this.addSql(
      `update entity set document_bytes = convert_from(convert_to(document_bytes, 'UTF8'), 'LATIN1') where document_bytes !~ '^[\\x01-\\x7f]*$'`,
    );
  }

  override down(): void {
    this.addSql(
      `update entity set document_bytes = convert_from(convert_to(document_bytes, 'LATIN1'), 'UTF8') where document_bytes !~ '^[\\x01-\\x7f]*$'`,
    );
    this.addSql(`
      create or replace function entity_document_stale() returns trigger language plpgsql as $$
      begin
        new.document := null;
        return new;
      end $$`);
    this.addSql(`alter table entity rename column document_bytes to document`);
  }
}
