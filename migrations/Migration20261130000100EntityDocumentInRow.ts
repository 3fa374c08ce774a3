import { Migration } from '@mikro-orm/migrations';

// The v2 document (what GET sends) is kept in the entity row, compressed;
// the record's JSON and its EAC-CPF element go out of line to TOAST. Until
// now PostgreSQL moved the largest columns out first, which put the
// document, the one column GET reads, in TOAST and kept the EAC-CPF element,
// read only by exports, in the row: every GET read the row's page, the TOAST
// index and one or two TOAST pages (docs/decisions/0213).
//
// STORAGE MAIN compresses the column in the row and moves it out only when
// the row would not fit a page otherwise. Rows written before keep their
// layout until their next change; `VACUUM FULL entity` (or pg_repack)
// rewrites them all at once.
export class Migration20261130000100EntityDocumentInRow extends Migration {
  override name = 'Migration20261130000100EntityDocumentInRow';

  override up(): void {
    this.addSql('alter table entity alter column document_bytes set storage main');
  }

  override down(): void {
    this.addSql('alter table entity alter column document_bytes set storage extended');
  }
}
