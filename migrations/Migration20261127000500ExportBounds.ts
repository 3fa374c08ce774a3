import { Migration } from '@mikro-orm/migrations';

// What bounding exports needs of their rows:
//  - request_key, a digest of what an export asks for (kind, fromSeq, ids):
//    an identical request made while a recent export is valid is answered
//    with that export (services/exports/start.ts);
//  - requested_count, the number of requested ids, kept when requested_ids
//    (up to EXPORT_MAX_IDS, megabytes) is dropped as the export ends: status
//    reads show it, so it cannot be derived from the dropped list;
//  - requested_ids nullable, NULL once the export ended;
//  - a partial index over the exports that hold a file or are writing one: the
//    running exports of a principal and the disk they use are read at every start.
export class Migration20261127000500ExportBounds extends Migration {
  override name = 'Migration20261127000500ExportBounds';

  override up(): void {
    this.addSql('alter table export_request add column request_key text');
    this.addSql('alter table export_request add column requested_count integer');
    this.addSql('update export_request set requested_count = jsonb_array_length(requested_ids)');
    this.addSql('alter table export_request alter column requested_count set not null');
    this.addSql('alter table export_request alter column requested_ids drop not null');
    this.addSql(`update export_request set requested_ids = null where status in ('COMPLETED', 'FAILED', 'EXPIRED')`);
    this.addSql(
      `create index export_request_live_idx on export_request (requested_by, status) include (bytes, request_key, created_at, expires_at)
        where status in ('ACCEPTED', 'RUNNING', 'COMPLETED')`,
    );
    this.addSql(
      `create index export_request_key_idx on export_request (request_key, created_at) where status in ('ACCEPTED', 'RUNNING', 'COMPLETED')`,
    );
  }

  override down(): void {
    this.addSql('drop index if exists export_request_key_idx');
    this.addSql('drop index if exists export_request_live_idx');
    this.addSql(`update export_request set requested_ids = '[]' where requested_ids is null`);
    this.addSql('alter table export_request alter column requested_ids set not null');
    this.addSql('alter table export_request drop column if exists requested_count');
    this.addSql('alter table export_request drop column if exists request_key');
  }
}
