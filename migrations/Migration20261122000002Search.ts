import { Migration } from '@mikro-orm/migrations';

// What search reads: one row per searchable value of a current record (item
// values and the display form of each name), normalised by the application
// (lower case, no accents) so one trigram index serves every comparator; and
// the participants of each record for user/userRole filters.
export class Migration20261122000002Search extends Migration {
  override name = 'Migration20261122000002Search';

  override up(): void {
    this.addSql(`create extension if not exists pg_trgm`);
    this.addSql(`
      create table search_value (
        entity_id bigint not null references entity (id),
        part_uuid uuid not null,
        part_type text not null,
        preferred boolean not null,
        kind text not null check (kind in ('item', 'name')),
        item_type text,
        item_spec text,
        value text not null,
        value_norm text not null
      )`);
    this.addSql(`create index search_value_entity_idx on search_value (entity_id)`);
    this.addSql(`create index search_value_trgm_idx on search_value using gin (value_norm gin_trgm_ops)`);
    this.addSql(`create index search_value_exact_idx on search_value (value_norm text_pattern_ops)`);
    this.addSql(`create index search_value_type_idx on search_value (item_type, value_norm text_pattern_ops)`);
    this.addSql(`
      create table entity_participant (
        entity_id bigint not null references entity (id),
        user_id text not null,
        role text not null,
        last_change timestamptz not null,
        primary key (entity_id, user_id, role)
      )`);
    this.addSql(`create index entity_participant_user_idx on entity_participant (user_id, role)`);
    this.addSql(`create index entity_type_state_idx on entity (entity_type, state, id)`);
    this.addSql(`create index entity_state_idx on entity (state, id)`);
  }

  override down(): void {
    this.addSql('drop table if exists search_value, entity_participant');
    this.addSql('drop index if exists entity_type_state_idx, entity_state_idx');
  }
}
