import { Migration } from '@mikro-orm/migrations';

// Each current record's EAC-CPF element, stored beside it (entity.eac_cpf,
// domain/eac-cpf/stored.ts): its UTF-8 bytes one character a byte, as
// document_bytes, with marks where an export puts its origin and agency. The
// batch write path writes it with the record (db/apply/write-plan.ts); NULL
// (rows written before this migration, a record whose text holds a mark) is
// written from the record at export time, as before (docs/decisions/0208).
//
// As for the v2 document, a stale element is never used: an UPDATE that sets
// `record` without a new element sets it to NULL. A change to the EAC-CPF
// writer's output needs a migration that sets the stored elements to NULL;
// test/integration/eac-cpf-stored.test.ts compares them with the writer's.
export class Migration20261129000200EntityEacCpf extends Migration {
  override name = 'Migration20261129000200EntityEacCpf';

  override up(): void {
    this.addSql(`alter table entity add column eac_cpf text`);
    this.addSql(`
      do $$
      begin
        alter table entity alter column eac_cpf set compression lz4;
      exception when feature_not_supported or invalid_parameter_value then
        null;
      end $$`);
    this.addSql(`
      create function entity_eac_cpf_stale() returns trigger language plpgsql as $$
      begin
        new.eac_cpf := null;
        return new;
      end $$`);
    this.addSql(`
      create trigger entity_eac_cpf_stale before update of record on entity
        for each row when (new.eac_cpf is not distinct from old.eac_cpf and new.eac_cpf is not null)
        execute function entity_eac_cpf_stale()`);
    this.addSql(`alter table entity enable always trigger entity_eac_cpf_stale`);
  }

  override down(): void {
    this.addSql('drop trigger if exists entity_eac_cpf_stale on entity');
    this.addSql('drop function if exists entity_eac_cpf_stale()');
    this.addSql('alter table entity drop column if exists eac_cpf');
  }
}
