import type pg from 'pg';
import type { Queryable } from './sql.ts';

// The HMAC signature covers host, method, path, query and date, not the body
// (docs/decisions/0053). So a signed request is named here by its key, its
// signature and the SHA-256 of its body: a true replay repeats all three,
// while two different requests to one URL in one second share only the first
// two, and so does a captured signature sent with a body of the attacker's
// (docs/decisions/0144). The rows live in PostgreSQL, so every API process
// sees them.

/** A signed request as the replay guard names it. */
export interface SignedRequest {
  keyId: string;
  signature: string;
  bodySha256: Buffer;
  /** When the signature's date leaves the accepted window: no replay of it can be accepted after that. */
  expiresAt: Date;
  /**
   * Called in the claim's transaction when another body was claimed under
   * this key and signature before; throwing refuses the write (the
   * transaction, this claim with it, rolls back).
   */
  onOtherBody?: () => void;
}

// Rows are swept this long after their expiry: the API hosts' clocks and the database's may differ a little.
const SWEEP_GRACE_SECONDS = 60;
// A claim sweeps at most this many expired rows: each claim adds one, so the table stays near its live size.
const SWEEP_LIMIT = 100;

/**
 * Records `answer` for `request` and returns the answer that stands: `answer`
 * itself for the first claim, the first claim's answer for every later one
 * (a replay). Call it inside the transaction that stores what `answer` names:
 * a claim racing an uncommitted one of the same key and signature waits for
 * it (a transaction-scoped advisory lock), then gets its answer, or takes its
 * place if it rolled back. A new body under a key and signature already
 * claimed with another is reported to `request.onOtherBody`.
 */
export async function claimSignedRequest(db: Queryable, request: SignedRequest, answer: string): Promise<string> {
  // The sweep, then the lock on this key and signature: the statement after it sees every claim committed before.
  await db.query(
    `with swept as (
       delete from replay_guard where ctid = any(array(
         select ctid from replay_guard where expires_at < now() - make_interval(secs => $1) limit $2 for update skip locked))
       returning 1)
     select pg_advisory_xact_lock(hashtextextended($3, 0)) from (select count(*) from swept) as done`,
    [SWEEP_GRACE_SECONDS, SWEEP_LIMIT, `replay_guard ${request.keyId} ${request.signature}`],
  );
  // The no-op update locks and returns the row that stands, in the same round trip; xmax = 0 marks a new row.
  const { rows } = await db.query<{ answer: string; inserted: boolean; other_body: boolean }>(
    `with other as (
       select exists(select 1 from replay_guard where key_id = $1 and signature = $2 and body_sha256 <> $3) as other_body),
     claim as (
       insert into replay_guard (key_id, signature, body_sha256, expires_at, answer) values ($1, $2, $3, $4, $5)
       on conflict (key_id, signature, body_sha256) do update set answer = replay_guard.answer
       returning answer, xmax = 0 as inserted)
     select claim.answer, claim.inserted, other.other_body from claim, other`,
    [request.keyId, request.signature, request.bodySha256, request.expiresAt, answer],
  );
  const row = rows[0]!;
  // A body sent again (a retry) is the same request, whatever was claimed since.
  if (row.inserted && row.other_body) request.onOtherBody?.();
  return row.answer;
}

/** The replay guard's rows outside a claim's transaction (db.replayGuard); claims are taken with what they name (db.exports.create). */
export class ReplayGuard {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Forgets the claim of `request` for `answer`: the work it named was not done, so a resend may do it. */
  async release(request: SignedRequest, answer: string): Promise<void> {
    await this.#pool.query(`delete from replay_guard where key_id = $1 and signature = $2 and body_sha256 = $3 and answer = $4`, [
      request.keyId,
      request.signature,
      request.bodySha256,
      answer,
    ]);
  }
}
