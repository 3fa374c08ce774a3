import { Migration } from '@mikro-orm/migrations';

// The v2 document of each current record, stored beside it (entity.document:
// the text serializeEntity(record, 'v2') writes, the body of GET
// /api/v2/entities/{ref}). The GET then sends stored text: PostgreSQL sends
// no jsonb (about half its CPU per read, which no longer detoasts the
// record), the API parses no JSON and writes no XML (bench/profile-get.ts,
// docs/performance.md). The batch write path writes it with the record, in
// the same row (db/apply/write-plan.ts); a NULL document (rows written
// before this migration, a record the writer refuses) is built from the
// record as before.
//
// A stale document is never served: an UPDATE that sets `record` without
// setting a new document sets the document to NULL (the trigger below, BEFORE
// UPDATE OF record; the WHEN compares lengths first, so a new document of
// another length costs no detoasting). ENABLE ALWAYS, so sessions with
// session_replication_role = replica (bench/lib/load.ts) keep it too. A
// change to the v2 entity writer's output needs a migration that sets the
// documents to NULL (or rewrites them); test/integration/entity-document.test.ts
// compares stored documents with the writer's. Compression lz4 (where the
// server is built with it): documents are toasted like the records (about
// 3 KB), and lz4 costs PostgreSQL 11-13 µs a read against pglz's 14-19 µs
// and far less per write (20,000 documents: 0.6-0.8 s against 1.6-1.7 s).
export class Migration20261125000100EntityDocument extends Migration {
  override name = 'Migration20261125000100EntityDocument';

  override up(): void {
    this.addSql(`alter table entity add column document text`);
    // lz4 where the server has it: compresses as well as the default pglz here (3.0 KB -> 2.25 KB a
    // document), about half pglz's CPU per read, a fraction of it per write.
    this.addSql(`
      do $$
      begin
        alter table entity alter column document set compression lz4;
      exception when feature_not_supported or invalid_parameter_value then
        null;
      end $$`);
    this.addSql(`
      create function entity_document_stale() returns trigger language plpgsql as $$
      begin
        new.document := null;
        return new;
      end $$`);
    this.addSql(`
      create trigger entity_document_stale before update of record on entity
        for each row when (new.document is not distinct from old.document and new.document is not null)
        execute function entity_document_stale()`);
    this.addSql(`alter table entity enable always trigger entity_document_stale`);
  }

  override down(): void {
    this.addSql('drop trigger if exists entity_document_stale on entity');
    this.addSql('drop function if exists entity_document_stale()');
    this.addSql('alter table entity drop column if exists document');
  }
}
