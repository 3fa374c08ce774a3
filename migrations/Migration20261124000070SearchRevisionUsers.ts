import { Migration } from '@mikro-orm/migrations';

// Search by `user` alone (v1's user field): the records a user sent in any
// revision (revision.user_name: the batch's sender, v1 `usr`) or takes part in
// (entity_participant.user_id). search_user holds each such (user, entity)
// pair once, and the filter is one EXISTS on its primary key:
//  - a page walks entity's primary key and search_user's (user_key,
//    entity_id) side by side (a merge semi-join), or reads the user's few
//    pairs and probes entity, whichever the user's share calls for;
//  - a total is a semi-join over the user's pairs alone.
// An index on revision (user_name, entity_id) serves the sender half just as
// well, but the filter is "sender OR participant", and PostgreSQL 15 turns
// an OR of two EXISTS into a subplan per entity (a walk of every entity for a
// rare user: 190 ms a page, 1.2 s a total on 1,000,000 entities), while the
// semi-join of a UNION ALL of both sides hashes every pair before the first
// row (1-2 s a page for a user with 700,000 records). One table with both
// sides, in entity order within a user, has neither problem. Measured on
// 1,000,000 entities, 1,800,000 revisions and 333,000 participants (2,100,000
// pairs, 180 MB with the key): under 1 ms a page for every user; a total in
// 0.1 ms for a user of 10 records, 70-135 ms for 6,700, 0.6-0.8 s for
// 700,000. It costs the writes: 200,000 revision rows in statements of
// 10,000 took 5.5-6.4 s with the trigger, 4.0-4.3 s without (an index on
// revision alone: 4.1-5.1 s), on a shared 2-core machine at load 5-7.
//
// Statement triggers keep it, in the transaction that writes the revision or
// the participants (the write path COPYs both), so a search never sees pairs
// older than the rows it reads. Pairs are only added: revisions are
// append-only and participants are never removed (addParticipant only adds
// or updates one). No foreign key: a row-level check per pair would slow
// every write, and entities are never deleted; TRUNCATE of revision
// (benchmarks, or entity … cascade) empties it. The triggers are ENABLE
// ALWAYS, so loaders with session_replication_role = replica keep them.
export class Migration20261124000070SearchRevisionUsers extends Migration {
  override name = 'Migration20261124000070SearchRevisionUsers';

  override up(): void {
    this.addSql(`
      create table search_user (
        user_key text not null,
        entity_id bigint not null,
        primary key (user_key, entity_id)
      )`);
    // Sorted inserts: two transactions adding the same pairs take their locks in one order (no deadlock).
    this.addSql(`
      create function search_user_senders_added() returns trigger language plpgsql as $$
      begin
        insert into search_user (user_key, entity_id)
          select distinct a.user_name, a.entity_id from added a where a.user_name is not null order by 1, 2
          on conflict do nothing;
        return null;
      end $$`);
    this.addSql(`
      create function search_user_participants_added() returns trigger language plpgsql as $$
      begin
        insert into search_user (user_key, entity_id)
          select distinct a.user_id, a.entity_id from added a order by 1, 2
          on conflict do nothing;
        return null;
      end $$`);
    this.addSql(`
      create function search_user_truncated() returns trigger language plpgsql as $$
      begin
        truncate search_user;
        return null;
      end $$`);
    this.addSql(
      `create trigger revision_search_user_added after insert on revision referencing new table as added for each statement execute function search_user_senders_added()`,
    );
    this.addSql(
      `create trigger entity_participant_search_user_added after insert on entity_participant referencing new table as added for each statement execute function search_user_participants_added()`,
    );
    this.addSql(
      `create trigger revision_search_user_truncated after truncate on revision for each statement execute function search_user_truncated()`,
    );
    this.addSql(`alter table revision enable always trigger revision_search_user_added`);
    this.addSql(`alter table revision enable always trigger revision_search_user_truncated`);
    this.addSql(`alter table entity_participant enable always trigger entity_participant_search_user_added`);

    // The revisions and participants already stored.
    this.addSql(`
      insert into search_user (user_key, entity_id)
        select user_name, entity_id from revision where user_name is not null
        union
        select user_id, entity_id from entity_participant`);
  }

  override down(): void {
    this.addSql('drop trigger if exists revision_search_user_added on revision');
    this.addSql('drop trigger if exists revision_search_user_truncated on revision');
    this.addSql('drop trigger if exists entity_participant_search_user_added on entity_participant');
    this.addSql('drop function if exists search_user_senders_added(), search_user_participants_added(), search_user_truncated()');
    this.addSql('drop table if exists search_user');
  }
}
