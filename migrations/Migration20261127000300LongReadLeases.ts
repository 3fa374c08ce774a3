import { Migration } from '@mikro-orm/migrations';

// long_read_lease: the long reads (feed pages, export downloads, synchronous
// v1 exports) each principal holds at this moment, shared by every API
// process (db/long-read-leases.ts). A lease names its holder (an API process)
// and expires unless that process renews it: a process that dies holding one
// frees it within a lease's length, without anyone cleaning up after it. A
// principal has slots 1…N; a row per slot it ever used, taken over in place.
export class Migration20261127000300LongReadLeases extends Migration {
  override name = 'Migration20261127000300LongReadLeases';

  override up(): void {
    this.addSql(`
      create table long_read_lease (
        principal text not null,
        slot integer not null,
        id uuid not null unique default gen_random_uuid(),
        holder text not null,
        expires_at timestamptz not null,
        primary key (principal, slot)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists long_read_lease');
  }
}
