import { Migration } from '@mikro-orm/migrations';

// The format of a snapshot export's file: the registry's own v2 XML, or
// EAC-CPF 2.0, whose records name the registry and link record pages under
// the origin the export was requested at (format_context, set by the API).
export class Migration20261128000200ExportFormat extends Migration {
  override name = 'Migration20261128000200ExportFormat';

  override up(): void {
    this.addSql(`alter table export_request add column format text not null default 'v2' check (format in ('v2', 'eac-cpf'))`);
    this.addSql('alter table export_request add column format_context jsonb');
  }

  override down(): void {
    this.addSql('alter table export_request drop column if exists format_context');
    this.addSql('alter table export_request drop column if exists format');
  }
}
