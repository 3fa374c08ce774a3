import type pg from 'pg';
import type { ChangeActivity, ChangeType } from '../domain/activity-streams/documents.ts';
import type { StreamPosition } from '../domain/activity-streams/position.ts';

// The change feed as a log of activities: one per revision, placed by its
// transaction's commit_seq (the order commits became visible, decision 0013)
// and then by entity id. Any snapshot sees a prefix of that order (a commit
// draws its commit_seq only once the one before is visible), so the
// activities after a position, once there are `limit` of them, never change.
// Every read walks transaction's commit_seq index and revision's
// (seq, entity_id) index from a position: it costs the rows it returns.

/** A position after every activity of a transaction. */
const AFTER_EVERY_ENTITY = '9223372036854775807';

export interface ActivityStreamRepository {
  /** The highest commit_seq committed, or '0' before the first commit. */
  latestCommitSeq(): Promise<string>;
  /** The highest commit_seq committed and the activities up to it, as of one snapshot. */
  committedTotal(): Promise<{ upToCommitSeq: string; total: number }>;
  /** Up to `limit` activities after `after`, oldest first. */
  activitiesAfter(after: StreamPosition, limit: number): Promise<ChangeActivity[]>;
  /**
   * The position of the n-th activity (1 = itself) counting back from `atOrBefore`
   * (the activity there, or the last of a transaction); undefined when fewer exist.
   */
  positionBack(atOrBefore: StreamPosition, n: number): Promise<StreamPosition | undefined>;
}

/** The last activity of the transaction committed at commitSeq (or of any before it). */
export function endOfCommit(commitSeq: string): StreamPosition {
  return { commitSeq, entityId: AFTER_EVERY_ENTITY };
}

interface ActivityRow {
  commit_seq: string;
  transaction_uuid: string;
  entity_id: string;
  entity_type: string;
  change_type: ChangeType;
  published: string;
  replaced_by_id: string | null;
  replaced_by_type: string | null;
}

// Which change a revision is: its creation; a state set to ERS_REPLACED (Deprecate), ERS_INVALID (Delete), or
// back to a valid state from ERS_INVALID (Add); else an update. A superseded revision holds its record in
// snapshot, the current one in entity. ERS_REPLACED is final, so the entity's replacedBy is the replacement.
const ACTIVITY_COLUMNS = `t.commit_seq, t.uuid as transaction_uuid, r.entity_id,
  case when r.snapshot is null then e.entity_type else r.snapshot->>'entityType' end as entity_type,
  case
    when r.changes ? 'created' then 'Create'
    when r.changes->'changes' @> '[{"op":"setState"}]' then
      case coalesce(r.snapshot->>'state', e.state)
        when 'ERS_REPLACED' then 'Deprecate'
        when 'ERS_INVALID' then 'Delete'
        else case when (select p.snapshot->>'state' from revision p where p.entity_id = r.entity_id and p.seq < r.seq
                         order by p.seq desc limit 1) = 'ERS_INVALID' then 'Add' else 'Update' end
      end
    else 'Update'
  end as change_type,
  to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as published`;

export function activityStreamRepository(pool: pg.Pool): ActivityStreamRepository {
  return {
    async latestCommitSeq() {
      const { rows } = await pool.query<{ commit_seq: string | null }>('select max(commit_seq) as commit_seq from transaction');
      return rows[0]?.commit_seq ?? '0';
    },

    async committedTotal() {
      // transaction.revisions_through (Migration20261128002000ActivityCounts): the newest commit's running total,
      // plus the revisions of any later commit that has none. One statement, so both read one snapshot.
      const { rows } = await pool.query<{ commit_seq: string | null; total: string | null }>(
        `select (select max(commit_seq) from transaction) as commit_seq,
                (select k.revisions_through + (select count(*) from transaction g join revision r on r.seq = g.seq
                                                where g.commit_seq > k.commit_seq)
                   from transaction k where k.revisions_through is not null order by k.commit_seq desc limit 1) as total`,
      );
      return { upToCommitSeq: rows[0]?.commit_seq ?? '0', total: Number(rows[0]?.total ?? 0) };
    },

    async activitiesAfter(after, limit) {
      // At most `limit` + 1 transactions with revisions (the one at the position may have none left after it), at
      // most `limit` revisions of each, sorted by an incremental sort on the transactions' order: a transaction of a
      // million revisions costs the page only.
      const { rows } = await pool.query<ActivityRow>(
        `select a.*, rp.id as replaced_by_id, rp.entity_type as replaced_by_type
           from (select ${ACTIVITY_COLUMNS}, case when e.state = 'ERS_REPLACED' then e.record->'replacedBy' end as replaced_by
                   from (select * from transaction x
                          where x.commit_seq >= $1 and exists (select 1 from revision w where w.seq = x.seq)
                          order by x.commit_seq limit $3 + 1) t
                   cross join lateral (select r.* from revision r
                                        where r.seq = t.seq and (t.commit_seq > $1 or r.entity_id > $2)
                                        order by r.entity_id limit $3) r
                   cross join lateral (select * from entity e where e.id = r.entity_id) e
                  order by t.commit_seq, r.entity_id
                  limit $3) a
           left join entity rp on a.change_type = 'Deprecate'
                and (rp.id = (a.replaced_by->>'entityId')::bigint or rp.uuid = (a.replaced_by->>'entityUuid')::uuid)
          order by a.commit_seq, a.entity_id`,
        [after.commitSeq, after.entityId, limit],
      );
      return rows.map(activityOf);
    },

    async positionBack(atOrBefore, n) {
      const { rows } = await pool.query<{ commit_seq: string; entity_id: string }>(
        `select t.commit_seq, r.entity_id
           from (select * from transaction x
                  where x.commit_seq <= $1 and exists (select 1 from revision w where w.seq = x.seq)
                  order by x.commit_seq desc limit $3 + 1) t
           cross join lateral (select r.entity_id from revision r
                                where r.seq = t.seq and (t.commit_seq < $1 or r.entity_id <= $2)
                                order by r.entity_id desc limit $3) r
          order by t.commit_seq desc, r.entity_id desc
          offset $3 - 1 limit 1`,
        [atOrBefore.commitSeq, atOrBefore.entityId, n],
      );
      return rows[0] && { commitSeq: rows[0].commit_seq, entityId: rows[0].entity_id };
    },
  };
}

function activityOf(row: ActivityRow): ChangeActivity {
  return {
    position: { commitSeq: row.commit_seq, entityId: row.entity_id },
    transaction: row.transaction_uuid,
    type: row.change_type,
    entityId: row.entity_id,
    entityType: row.entity_type,
    published: row.published,
    ...(row.replaced_by_id !== null ? { replacedBy: { entityId: row.replaced_by_id, entityType: row.replaced_by_type! } } : {}),
  };
}
