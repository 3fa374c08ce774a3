import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';

// A scrape of /metrics costs a few rows whatever the tables hold: every
// statement it sends is recorded (a hook on the pool) and planned with
// sequential scans priced out, and none reads the job or record tables
// whole. The counts it reports are still the tables' own.

const WHOLE_TABLES = new Set(['batch', 'export_request', 'entity', 'revision', 'search_value']);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** The plan's scans of the listed tables that read them whole: sequential scans, or index scans without a condition on a full index. */
function wholeTableReads(node: PlanNode, partialIndexes: ReadonlySet<string>): string[] {
  const own =
    node['Relation Name'] !== undefined &&
    WHOLE_TABLES.has(node['Relation Name']) &&
    (node['Node Type'] === 'Seq Scan' || (node['Index Cond'] === undefined && !partialIndexes.has(node['Index Name'] ?? '')))
      ? [`${node['Node Type']} on ${node['Relation Name']}`]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => wholeTableReads(child, partialIndexes))];
}

describe('/metrics at the cost of a few rows', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('scrapes without reading a job or record table whole, and reports the tables own counts', async () => {
    const saved = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', `Scraped ${randomUUID()}`)]),
    });
    expect(saved.status).toBe(200);
    expect((await batchEnded(harness, (await saved.json()) as string)).status).toBe('COMPLETED');

    const pool = harness.db.pool;
    const sent: { text: string; values?: unknown[] }[] = [];
    const query = pool.query.bind(pool);
    pool.query = ((config: unknown, values?: unknown) => {
      if (typeof config === 'string') sent.push({ text: config, ...(Array.isArray(values) ? { values } : {}) });
      else if (config && typeof config === 'object' && 'text' in config) sent.push(config as { text: string; values?: unknown[] });
      return (query as (...args: unknown[]) => unknown)(config, values);
    }) as typeof pool.query;
    let scraped: string;
    try {
      const response = await harness.api('/metrics', { as: null, headers: metricsAuthorization(harness.config) });
      expect(response.status).toBe(200);
      scraped = await response.text();
    } finally {
      pool.query = query;
    }
    expect(sent.length).toBeGreaterThan(0);

    const partial = new Set(
      (await harness.sql<{ name: string }>(`select indexrelid::regclass::text as name from pg_index where indpred is not null`)).map(
        (row) => row.name,
      ),
    );
    const client = await pool.connect();
    try {
      await client.query('begin; set local enable_seqscan = off');
      for (const statement of sent) {
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({
          text: `explain (format json) ${statement.text}`,
          values: statement.values ?? [],
        });
        expect(wholeTableReads(rows[0]!['QUERY PLAN'][0].Plan, partial), statement.text).toEqual([]);
      }
    } finally {
      await client.query('rollback');
      client.release();
    }

    // The kept counts agree with the tables themselves.
    const [tables] = await harness.sql<{ completed: string; changes: string }>(
      `select count(*) filter (where status = 'COMPLETED') as completed, coalesce(sum(changes_total) filter (where status = 'COMPLETED'), 0) as changes from batch`,
    );
    expect(scraped).toMatch(new RegExp(`^batches_total\\{outcome="COMPLETED"\\} ${tables!.completed}$`, 'm'));
    expect(scraped).toMatch(new RegExp(`^batch_changes_total ${tables!.changes}$`, 'm'));
  });
});
