import { Migration } from '@mikro-orm/migrations';

// The data model. Revisions are append-only; `entity` holds the
// current form denormalised for fast reads; a transaction's `seq` orders the
// change feeds.
export class Migration20261122000001Initial extends Migration {
  override name = 'Migration20261122000001Initial';

  override up(): void {
    this.addSql(`
      create table batch (
        id uuid primary key,
        body_sha256 text not null,
        api_version text not null check (api_version in ('v1', 'v2')),
        submitted_by text not null,
        status text not null check (status in ('ACCEPTED', 'PROCESSING', 'COMPLETED', 'FAILED')),
        force boolean not null default false,
        offered_force_key text,
        changes_total integer,
        changes_applied integer not null default 0,
        result jsonb,
        error text,
        attempt integer not null default 1,
        submitted_at timestamptz not null default now(),
        finished_at timestamptz
      )`);
    this.addSql(`create index batch_body_sha256_idx on batch (body_sha256)`);
    // The body lives apart so that status reads never drag megabytes along;
    // STORAGE EXTERNAL keeps it uncompressed, so substring() reads are cheap chunks.
    this.addSql(`
      create table batch_body (
        batch_id uuid primary key references batch (id) on delete cascade,
        bytes bigint not null,
        body bytea not null
      )`);
    this.addSql(`alter table batch_body alter column body set storage external`);

    this.addSql(`
      create table transaction (
        seq bigserial primary key,
        uuid uuid not null unique,
        batch_id uuid not null unique references batch (id),
        created_at timestamptz not null default now()
      )`);

    this.addSql(`create sequence entity_id_seq`);
    this.addSql(`
      create table entity (
        id bigint primary key,
        uuid uuid not null unique,
        entity_type text not null,
        state text not null check (state in ('ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED')),
        rev uuid not null,
        metadata_rev uuid not null,
        last_seq bigint not null,
        preferred_name text,
        preferred_name_norm text,
        description text,
        record jsonb not null
      )`);
    this.addSql(
      `create index entity_type_name_idx on entity (entity_type, preferred_name_norm) where state in ('ERS_NEW', 'ERS_APPROVED')`,
    );

    this.addSql(`
      create table revision (
        uuid uuid primary key,
        entity_id bigint not null references entity (id),
        seq bigint not null references transaction (seq),
        batch_id uuid not null references batch (id),
        rev uuid not null,
        metadata_rev uuid not null,
        prev_rev uuid,
        content_changed boolean not null,
        created_at timestamptz not null,
        user_name text,
        principal text not null,
        changes jsonb not null,
        -- null while this is the record's current revision (entity.record is
        -- then the snapshot); filled when the record next changes
        snapshot jsonb
      )`);
    this.addSql(`create index revision_entity_idx on revision (entity_id, seq)`);
    this.addSql(`create index revision_seq_idx on revision (seq, entity_id)`);
    this.addSql(`create index revision_rev_idx on revision (entity_id, rev)`);

    this.addSql(`
      create table export_request (
        id uuid primary key,
        kind text not null check (kind in ('snapshot', 'revisions')),
        requested_ids jsonb not null,
        from_seq bigint,
        from_trans_id uuid,
        status text not null check (status in ('ACCEPTED', 'RUNNING', 'COMPLETED', 'FAILED', 'EXPIRED')),
        requested_by text not null,
        file_path text,
        entities_written bigint not null default 0,
        bytes bigint not null default 0,
        sha256 text,
        missing jsonb not null default '[]',
        error text,
        created_at timestamptz not null default now(),
        finished_at timestamptz,
        expires_at timestamptz
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists export_request, revision, entity, transaction, batch_body, batch cascade');
    this.addSql('drop sequence if exists entity_id_seq');
  }
}
