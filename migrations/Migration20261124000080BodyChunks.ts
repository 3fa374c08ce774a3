import { Migration } from '@mikro-orm/migrations';

// Batch bodies in chunks (docs/decisions/0004). One bytea of
// the whole body capped a batch below PostgreSQL's 1 GB field size (and its
// hex-encoded COPY line at half that), and needed the whole body at once.
// The API now streams an upload into batch_body_chunk rows of 1 MiB, by
// binary COPY, while it validates the same bytes; the rows carry a fresh
// upload_id, so they are written before the batch row they belong to exists
// (its id and digest are known only at the end) and never collide with the
// chunks of an earlier attempt under the same batch id. The foreign key to
// batch_body is checked at commit: the chunks, the batch and its batch_body
// row commit together or not at all.
export class Migration20261124000080BodyChunks extends Migration {
  override name = 'Migration20261124000080BodyChunks';

  override up(): void {
    this.addSql('alter table batch_body add column upload_id uuid');
    this.addSql('update batch_body set upload_id = gen_random_uuid()');
    this.addSql('alter table batch_body alter column upload_id set not null');
    this.addSql('alter table batch_body add constraint batch_body_upload_id_key unique (upload_id)');
    this.addSql(`
      create table batch_body_chunk (
        upload_id uuid not null references batch_body (upload_id) on delete cascade deferrable initially deferred,
        seq integer not null,
        data bytea not null,
        primary key (upload_id, seq)
      )`);
    // Chunks are read whole and in order: compressing them would only cost the upload time.
    this.addSql('alter table batch_body_chunk alter column data set storage external');
    this.addSql(`
      insert into batch_body_chunk (upload_id, seq, data)
        select b.upload_id, g.i, substring(b.body from g.i * 1048576 + 1 for 1048576)
          from batch_body b, generate_series(0, greatest(((b.bytes - 1) / 1048576)::integer, 0)) g(i)`);
    this.addSql('alter table batch_body drop column body');
  }

  override down(): void {
    this.addSql('alter table batch_body add column body bytea');
    this.addSql(`
      update batch_body b set body = coalesce((select string_agg(c.data, ''::bytea order by c.seq) from batch_body_chunk c where c.upload_id = b.upload_id), ''::bytea)`);
    this.addSql('alter table batch_body alter column body set not null');
    this.addSql('alter table batch_body alter column body set storage external');
    this.addSql('drop table batch_body_chunk');
    this.addSql('alter table batch_body drop column upload_id');
  }
}
