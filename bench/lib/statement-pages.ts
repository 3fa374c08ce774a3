// The database pages one statement reads: what the read costs in work,
// whatever the memory holds. A read of a fixed answer that reads the same
// pages at every size costs what it answers; its time can still grow where
// those pages come from disk instead of memory.
import type pg from 'pg';

export interface StatementPages {
  /** Pages of shared buffers the statement read (found in PostgreSQL's buffers or read into them). */
  pages: number;
  /** Of them, those PostgreSQL read into its buffers (from the OS cache or the disk). */
  readIn: number;
}

interface PlanBuffers {
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
}

/**
 * Runs `statement` under EXPLAIN (ANALYZE, BUFFERS) in a read-only transaction without JIT (as the service runs
 * its reads) and returns the pages its execution read; planning is left out. A node's counts include those of
 * the nodes, init plans and functions it ran, so the top node's are the statement's.
 */
export async function statementPages(client: pg.ClientBase, statement: { text: string; values: unknown[] }): Promise<StatementPages> {
  await client.query('begin transaction isolation level repeatable read read only; set local jit = off');
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanBuffers }] }>({
      text: `explain (analyze, buffers, timing off, format json) ${statement.text}`,
      values: statement.values,
    });
    const plan = rows[0]!['QUERY PLAN'][0].Plan;
    const hit = plan['Shared Hit Blocks'] ?? 0;
    const readIn = plan['Shared Read Blocks'] ?? 0;
    return { pages: hit + readIn, readIn };
  } finally {
    await client.query('rollback');
  }
}
