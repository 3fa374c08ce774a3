import { Migration } from '@mikro-orm/migrations';

// The large values every batch writes (the current record, a revision's
// changes and snapshot, the batch's result) are compressed with lz4 where the
// server is built with it, instead of PostgreSQL's default pglz. A record
// (about 3.5 KB of JSON) is over the size PostgreSQL compresses at, so every
// one of them went through pglz: copying 30,000 records took 2.55 s of
// PostgreSQL's CPU with pglz and 1.5 s with lz4, for the same stored size
// (92 MB); a 100,000 batch's result row 1.65 s against 0.5 s. Reads
// decompress either kind, so rows written before stay as they are.
//
// A property of the columns, not of the session that writes: every writer,
// and the ingest benchmark's COPY baseline (freshly migrated tables), store
// the same way (docs/decisions/0007). The body chunks are stored uncompressed
// already (storage external, Migration20261124000080BodyChunks).
const COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ['entity', 'record'],
  ['revision', 'changes'],
  ['revision', 'snapshot'],
  ['batch', 'result'],
];

export class Migration20261125000200ToastLz4 extends Migration {
  override name = 'Migration20261125000200ToastLz4';

  override up(): void {
    // A server built without lz4 refuses the method: the columns then keep pglz.
    for (const [table, column] of COLUMNS) {
      this.addSql(`
        do $$
        begin
          alter table ${table} alter column ${column} set compression lz4;
        exception when feature_not_supported or invalid_parameter_value then
          null;
        end $$`);
    }
  }

  override down(): void {
    for (const [table, column] of COLUMNS) this.addSql(`alter table ${table} alter column ${column} set compression default`);
  }
}
