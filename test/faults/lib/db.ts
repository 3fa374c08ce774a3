// What the database holds, read directly: the assertions of the fault
// scenarios are about rows, not about what the API says.
import pg from 'pg';

export class Inspector {
  /** One connection, as a pool: what the service's own queries (findBatch, …) take. */
  readonly pool: pg.Pool;

  private constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  static async connect(databaseUrl: string): Promise<Inspector> {
    const pool = new pg.Pool({ connectionString: databaseUrl, statement_timeout: 60_000, application_name: 'faults-inspector', max: 1 });
    // Our own backend is spared by pg_terminate_backend(… pid <> pg_backend_pid()), but be safe.
    pool.on('error', () => undefined);
    await pool.query('select 1');
    return new Inspector(pool);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query<T>(sql, params)).rows;
  }

  async one<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T> {
    const rows = await this.query<T>(sql, params);
    if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}: ${sql}`);
    return rows[0]!;
  }

  async batch(
    id: string,
  ): Promise<{ status: string; changesApplied: number; changesTotal: number | null; error: string | null } | undefined> {
    const rows = await this.query<{ status: string; changes_applied: number; changes_total: number | null; error: string | null }>(
      'select status, changes_applied, changes_total, error from batch where id = $1',
      [id],
    );
    const row = rows[0];
    return row && { status: row.status, changesApplied: row.changes_applied, changesTotal: row.changes_total, error: row.error };
  }

  async exportRow(id: string): Promise<{ status: string; entitiesWritten: number; error: string | null } | undefined> {
    const rows = await this.query<{ status: string; entities_written: string; error: string | null }>(
      'select status, entities_written, error from export_request where id = $1',
      [id],
    );
    const row = rows[0];
    return row && { status: row.status, entitiesWritten: Number(row.entities_written), error: row.error };
  }

  async countOfType(entityType: string): Promise<number> {
    const row = await this.one<{ n: string }>('select count(*) as n from entity where entity_type = $1', [entityType]);
    return Number(row.n);
  }

  /**
   * Everything "applied exactly once" means for a batch of `expected` new
   * entities of `entityType`; returns the violations (empty when fine).
   */
  async exactlyOnceViolations(batchId: string, entityType: string, expected: number): Promise<string[]> {
    const problems: string[] = [];
    const batch = await this.batch(batchId);
    if (batch?.status !== 'COMPLETED') problems.push(`batch ${batchId} is ${batch?.status ?? 'missing'} (${batch?.error ?? 'no error'})`);
    const facts = await this.one<{
      transactions: string;
      revisions: string;
      revised: string;
      entities: string;
      uuids: string;
      names: string;
      other_revisions: string;
      sans_revision: string;
    }>(
      `select
         (select count(*) from transaction where batch_id = $1) as transactions,
         (select count(*) from revision where batch_id = $1) as revisions,
         (select count(distinct entity_id) from revision where batch_id = $1) as revised,
         (select count(*) from entity where entity_type = $2) as entities,
         (select count(distinct uuid) from entity where entity_type = $2) as uuids,
         (select count(distinct preferred_name_norm) from entity where entity_type = $2) as names,
         (select count(*) from revision r join entity e on e.id = r.entity_id where e.entity_type = $2 and r.batch_id <> $1) as other_revisions,
         (select count(*) from entity e where e.entity_type = $2 and not exists (select 1 from revision r where r.entity_id = e.id and r.batch_id = $1)) as sans_revision`,
      [batchId, entityType],
    );
    const expect = (name: string, value: string, wanted: number) => {
      if (Number(value) !== wanted) problems.push(`${name}: ${value}, expected ${wanted}`);
    };
    expect('transaction rows of the batch', facts.transactions, 1);
    expect('revisions of the batch', facts.revisions, expected);
    expect('entities revised by the batch', facts.revised, expected);
    expect(`entities of type ${entityType}`, facts.entities, expected);
    expect('distinct entity uuids', facts.uuids, expected);
    expect('distinct preferred names', facts.names, expected);
    expect('revisions of these entities by other batches', facts.other_revisions, 0);
    expect('entities of the type without a revision of the batch', facts.sans_revision, 0);
    return problems;
  }

  /** Cuts every connection to this database but our own; returns how many were cut. */
  async terminateOthers(): Promise<number> {
    // In the select list (not the where clause), so that it runs only on the rows the filter kept.
    const rows = await this.query<{ cut: boolean }>(
      'select pg_terminate_backend(pid) as cut from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return rows.filter((row) => row.cut).length;
  }
}
