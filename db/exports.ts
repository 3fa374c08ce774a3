import type pg from 'pg';
import { raw } from '@mikro-orm/core';
import {
  ExportRequestSchema,
  type ExportFormat,
  type ExportFormatContext,
  type ExportKind,
  type ExportRequest,
} from './entities/export-request.ts';
import type { Orm } from './orm.ts';
import { claimSignedRequest, type SignedRequest } from './replay-guard.ts';
import { asRow, type Columns } from './rows.ts';
import { inTransaction, type Queryable } from './sql.ts';

export type { ExportFormatContext, ExportKind, ExportStatus } from './entities/export-request.ts';

/** A stored export request, its requested ids included: the entity's columns as plain data. */
export type ExportRow = Columns<ExportRequest>;

/** An export without its list of requested ids (up to EXPORT_MAX_IDS, megabytes): what status, detail and download need. */
export type ExportState = Omit<ExportRow, 'requestedIds'>;

/** The identifiers an export names: JSON numbers, or strings holding a number or a UUID. */
export type RequestedId = number | string;

export interface NewExport {
  id: string;
  kind: ExportKind;
  /** v2 when absent. */
  format?: ExportFormat;
  formatContext?: ExportFormatContext;
  requestedIds: readonly RequestedId[];
  /** A digest of what the export asks for (kind, fromSeq, ids): identical requests have the same key. */
  requestKey: string;
  fromSeq?: string;
  fromTransId?: string;
  requestedBy: string;
}

export interface FinishedExport {
  filePath: string;
  entitiesWritten: number;
  bytes: number;
  sha256: string;
  upToTransId: string;
  finishedAt: Date;
  expiresAt: Date;
}

/**
 * What a new export must fit in. An identical request (the same requestKey,
 * from any principal) made within `reuseSeconds` of a valid export gets that
 * export; otherwise the principal's running exports and the disk of valid
 * and running exports must leave room for it.
 */
export interface ExportBounds {
  /** 0: every request starts an export of its own. */
  reuseSeconds: number;
  /** ACCEPTED or RUNNING exports one principal may have at once; 0: no limit. */
  runningPerPrincipal: number;
  /** Bytes of the files of valid exports and of exports being written at which no new export starts; 0: no limit. */
  diskBudgetBytes: number;
  /** The same, of one principal's exports, at which that principal's new exports are refused; 0: no limit. */
  diskBytesPerPrincipal: number;
}

/** How a start was answered: a new export, one that stands (a replay or an identical recent export), or a refusal. */
export type ExportAdmission =
  | { id: string; outcome: 'started' | 'replayed' | 'reused' }
  | { refused: 'running'; running: number }
  | { refused: 'disk'; bytes: number }
  | { refused: 'share'; bytes: number };

/** An export the recovery sweep looks at. */
export interface StaleExport {
  id: string;
  status: 'ACCEPTED' | 'RUNNING';
  kind: ExportKind;
  format: ExportFormat;
  requestedBy: string;
  requestedCount: number;
  fromTransId: string | null;
  cursor: { at: string; id: string };
}

const NO_BOUNDS: ExportBounds = { reuseSeconds: 0, runningPerPrincipal: 0, diskBudgetBytes: 0, diskBytesPerPrincipal: 0 };

const STILL_RUNNING = ['ACCEPTED', 'RUNNING'] as const;

// The columns of ExportState; bigints and timestamps come back as text from MikroORM's pool and are made numbers and Dates.
const EXPORT_STATE_BY_ID = `select id, kind, format, format_context as "formatContext", from_seq as "fromSeq", from_trans_id as "fromTransId", up_to_trans_id as "upToTransId", status, requested_by as "requestedBy",
  file_path as "filePath", entities_written as "entitiesWritten", bytes, sha256, missing, error, activity_attempts as "activityAttempts",
  created_at as "createdAt", finished_at as "finishedAt", expires_at as "expiresAt", requested_count as "requestedCount", request_key as "requestKey"
  from export_request where id = $1`;
const DIGITS = /^[0-9]+$/;

/**
 * The export_request rows through MikroORM's EntityManager: whole-row and
 * list reads on a fork of it, state changes as guarded `nativeUpdate`s. SQL
 * on MikroORM's pool for the status read every poll runs (prepared), the
 * ids that name no record (an anti-join against entity), and the insert,
 * which shares a transaction with the replay guard's claim.
 */
export class ExportRepository {
  readonly #orm: Orm;
  readonly #pool: pg.Pool;

  constructor(orm: Orm, pool: pg.Pool) {
    this.#orm = orm;
    this.#pool = pool;
  }

  /** The whole row, requested ids included: what the export activity reads. */
  async find(id: string): Promise<ExportRow | undefined> {
    return asRow<ExportRow>(await this.#em().findOne(ExportRequestSchema, id));
  }

  /** The export as a status read needs it: no requested ids. One named prepared statement on the pool, as the batches' (BatchRepository.findState). */
  async findState(id: string): Promise<ExportState | undefined> {
    const { rows } = await this.#pool.query<ExportState>({ name: 'export-state-by-id', text: EXPORT_STATE_BY_ID, values: [id] });
    const row = rows[0];
    return (
      row && {
        ...row,
        entitiesWritten: Number(row.entitiesWritten),
        bytes: Number(row.bytes),
        createdAt: new Date(row.createdAt),
        finishedAt: row.finishedAt === null ? null : new Date(row.finishedAt),
        expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt),
      }
    );
  }

  /**
   * Stores a new export request, ACCEPTED, unless an identical recent one
   * stands or the bounds refuse it. With `signed`, the replay guard's claim of
   * that signed request commits with it: a replay gets the export the first
   * request got (then nothing is stored). A claim racing an uncommitted one
   * waits for it. One principal's starts are taken one at a time (a
   * transaction-scoped advisory lock), so every API process counts the same
   * running exports and none lets a principal past its limit.
   */
  async create(request: NewExport, signed?: SignedRequest, bounds: ExportBounds = NO_BOUNDS): Promise<ExportAdmission> {
    try {
      return await inTransaction(this.#pool, async (client) => {
        await client.query(`select pg_advisory_xact_lock(hashtextextended('export-start:' || $1, 0))`, [request.requestedBy]);
        const reusable = bounds.reuseSeconds > 0 ? await findReusable(client, request.requestKey, bounds.reuseSeconds) : undefined;
        const answer = reusable ?? request.id;
        const standing = signed ? await claimSignedRequest(client, signed, answer) : answer;
        if (standing !== answer) return { id: standing, outcome: 'replayed' as const };
        if (reusable !== undefined) return { id: reusable, outcome: 'reused' as const };
        await checkBounds(client, request.requestedBy, bounds);
        await insertExport(client, request);
        return { id: request.id, outcome: 'started' as const };
      });
    } catch (error) {
      // The refusal rolled the replay guard's claim back with it: a resend later may start the export.
      if (error instanceof Refused) return error.admission;
      throw error;
    }
  }

  /** Starts (or restarts, on a retried attempt) the run: progress goes back to zero with the file. False once the export ended. */
  async markRunning(id: string, missing: readonly string[]): Promise<boolean> {
    const updated = await this.#em().nativeUpdate(
      ExportRequestSchema,
      { id, status: { $in: [...STILL_RUNNING] } },
      { status: 'RUNNING', entitiesWritten: 0, bytes: 0, missing: [...missing], error: null },
    );
    return updated === 1;
  }

  /** Records that Temporal started attempt `attempt` of the export activity; the highest number wins (see the batches'). */
  async recordActivityAttempt(id: string, attempt: number): Promise<void> {
    await this.#em().nativeUpdate(
      ExportRequestSchema,
      { id, $or: [{ activityAttempts: null }, { activityAttempts: { $lt: attempt } }] },
      { activityAttempts: attempt },
    );
  }

  /** What the file holds so far, while the export is RUNNING. */
  async recordProgress(id: string, entitiesWritten: number, bytes: number): Promise<void> {
    await this.#em().nativeUpdate(ExportRequestSchema, { id, status: 'RUNNING' }, { entitiesWritten, bytes });
  }

  /** ACCEPTED or RUNNING → COMPLETED with its file; false when the export had ended already. */
  async complete(id: string, done: FinishedExport): Promise<boolean> {
    const updated = await this.#em().nativeUpdate(
      ExportRequestSchema,
      { id, status: { $in: [...STILL_RUNNING] } },
      { status: 'COMPLETED', ...done, error: null, requestedIds: null },
    );
    return updated === 1;
  }

  /** ACCEPTED or RUNNING → FAILED, saying why; false when the export had ended already. */
  async fail(id: string, error: string): Promise<boolean> {
    const updated = await this.#em().nativeUpdate(
      ExportRequestSchema,
      { id, status: { $in: [...STILL_RUNNING] } },
      { status: 'FAILED', error, finishedAt: raw('clock_timestamp()'), requestedIds: null },
    );
    return updated === 1;
  }

  /**
   * Expires up to `limit` finished exports past their expiry: removes each file
   * (`remove`, missing files are fine) and then marks the row EXPIRED, so a
   * crash in between leaves the row to be expired again. Returns their ids.
   */
  async expireDue(limit: number, remove: (id: string) => Promise<void>): Promise<string[]> {
    const em = this.#em();
    const due = await em.find(
      ExportRequestSchema,
      { status: 'COMPLETED', expiresAt: { $lte: raw('clock_timestamp()') } },
      { fields: ['id'], orderBy: { expiresAt: 'asc' }, limit },
    );
    const expired: string[] = [];
    for (const { id } of due) {
      await remove(id);
      if ((await em.nativeUpdate(ExportRequestSchema, { id, status: 'COMPLETED' }, { status: 'EXPIRED' })) === 1) expired.push(id);
    }
    return expired;
  }

  /**
   * Exports ACCEPTED or RUNNING since longer than this: their workflow may have ended without them, or (ACCEPTED)
   * never have been started. With what starting its workflow needs.
   */
  async findStaleRunning(olderThanSeconds: number, limit: number, after?: { at: string; id: string }): Promise<StaleExport[]> {
    const { rows } = await this.#pool.query<Omit<StaleExport, 'cursor'> & { at: string }>(
      `select id, status, kind, format, requested_by as "requestedBy", coalesce(requested_count, 0)::int as "requestedCount",
              from_trans_id as "fromTransId", created_at::text as at
         from export_request
        where status = any($3) and created_at < now() - make_interval(secs => $1)
          and ($4::timestamptz is null or (created_at, id) > ($4::timestamptz, $5::uuid))
        order by created_at, id limit $2`,
      [olderThanSeconds, limit, [...STILL_RUNNING], after?.at ?? null, after?.id ?? null],
    );
    return rows.map(({ at, ...row }) => ({ ...row, cursor: { at, id: row.id } }));
  }

  /**
   * The requested identifiers that match no record, as the client wrote them
   * (as strings), each once, in request order. SQL: an anti-join of the list
   * against entity, which has no entity of its own.
   */
  async findMissing(requested: readonly RequestedId[]): Promise<string[]> {
    if (requested.length === 0) return [];
    const given = requested.map(String);
    const ids = requested.map((id) => (typeof id === 'number' || DIGITS.test(id) ? String(id) : null));
    const uuids = requested.map((id) => (typeof id === 'string' && !DIGITS.test(id) ? id.toLowerCase() : null));
    const { rows } = await this.#pool.query<{ given: string }>(
      `select r.given
         from unnest($1::text[], $2::bigint[], $3::uuid[]) with ordinality as r(given, id, uuid, n)
        where not exists (select 1 from entity e where e.id = r.id)
          and not exists (select 1 from entity e where e.uuid = r.uuid)
        group by r.given
        order by min(r.n)`,
      [given, ids, uuids],
    );
    return rows.map((row) => row.given);
  }

  #em() {
    return this.#orm.em.fork();
  }
}

/** The export_request row of a new export, ACCEPTED, in the caller's transaction (ExportRepository.create) or on its own. */
export async function insertExport(db: Queryable, request: NewExport): Promise<void> {
  await db.query(
    `insert into export_request (id, kind, format, format_context, requested_ids, requested_count, request_key, from_seq, from_trans_id, status, requested_by)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'ACCEPTED', $10)`,
    [
      request.id,
      request.kind,
      request.format ?? 'v2',
      request.formatContext === undefined ? null : JSON.stringify(request.formatContext),
      JSON.stringify(request.requestedIds),
      request.requestedIds.length,
      request.requestKey,
      request.fromSeq ?? null,
      request.fromTransId ?? null,
      request.requestedBy,
    ],
  );
}

/** A refusal of ExportRepository.create, thrown to roll its transaction back. */
class Refused extends Error {
  readonly admission: ExportAdmission;

  constructor(admission: ExportAdmission) {
    super('export refused');
    this.admission = admission;
  }
}

/** The newest export with this key, requested within `withinSeconds`, still running or completed and not expired. */
async function findReusable(db: Queryable, requestKey: string, withinSeconds: number): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `select id from export_request
      where request_key = $1 and status in ('ACCEPTED', 'RUNNING', 'COMPLETED')
        and created_at > now() - make_interval(secs => $2)
        and (expires_at is null or expires_at > now())
      order by created_at desc limit 1`,
    [requestKey, withinSeconds],
  );
  return rows[0]?.id;
}

/** Throws Refused when the principal runs its limit of exports, or its export files fill its share, or all of them the budget. */
async function checkBounds(db: Queryable, principal: string, bounds: ExportBounds): Promise<void> {
  if (bounds.runningPerPrincipal > 0) {
    const { rows } = await db.query<{ n: string }>(
      `select count(*) as n from export_request where requested_by = $1 and status in ('ACCEPTED', 'RUNNING')`,
      [principal],
    );
    const running = Number(rows[0]!.n);
    if (running >= bounds.runningPerPrincipal) throw new Refused({ refused: 'running', running });
  }
  if (bounds.diskBudgetBytes > 0) {
    // Running exports count what they wrote so far: their files grow past it, which the budget's margin must allow for.
    const { rows } = await db.query<{ bytes: string }>(
      `select coalesce(sum(bytes), 0) as bytes from export_request
        where status in ('ACCEPTED', 'RUNNING') or (status = 'COMPLETED' and expires_at > now())`,
    );
    const bytes = Number(rows[0]!.bytes);
    if (bytes >= bounds.diskBudgetBytes) throw new Refused({ refused: 'disk', bytes });
  }
  if (bounds.diskBytesPerPrincipal > 0) {
    const { rows } = await db.query<{ bytes: string }>(
      `select coalesce(sum(bytes), 0) as bytes from export_request
        where requested_by = $1 and (status in ('ACCEPTED', 'RUNNING') or (status = 'COMPLETED' and expires_at > now()))`,
      [principal],
    );
    const bytes = Number(rows[0]!.bytes);
    if (bytes >= bounds.diskBytesPerPrincipal) throw new Refused({ refused: 'share', bytes });
  }
}
