import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAME_SEARCHES } from '../../bench/lib/broad-searches.ts';
import { generateCreates } from '../../bench/lib/generate.ts';
import type { Condition, SearchQuery } from '../../domain/search-query.ts';
import { CREATE_NAME_STAGE, KEY_HOLDERS_SQL, STAGED_NAMES } from '../../db/apply/names.ts';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { NAME_HOLDER_STATES, NAME_KEY_SEPARATOR } from '../../domain/batch/index.ts';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';
import { serializeBatch } from '../../domain/xml/index.ts';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { dropScratchDatabase, scratchDatabaseUrl } from '../support/scratch-database.ts';
import { eventually } from '../support/poll.ts';
import { captureQueries, planProblems, readStatement, type PlanProblem } from '../support/query-plans.ts';

// The hot reads keep their index plans on a registry that was never
// analyzed, as a bulk load leaves it where autovacuum is off or late: a
// database of its own, filled through the service's batches with no ANALYZE
// after them (ANALYZE_AFTER_RECORDS=0) and autovacuum off on its tables, so
// that pg_stats knows nothing of them. Each read is run as a client runs it
// (HTTP, and the export in the worker); every statement it sends is captured
// and EXPLAINed with its parameters: no sequential scan of a large table, no
// sort of one that a limit does not bound. Last, after a VACUUM (what
// autovacuum leaves, still with no statistics), a feed page reads entity and
// revision from their indexes alone.

const LARGE_TABLES = ['entity', 'revision', 'transaction', 'search_value', 'name_word', 'entity_participant'] as const;
// transaction holds a row per batch: a few here, and a table of one page is read whole whatever its indexes.
const JUDGED = new Set<string>(LARGE_TABLES.filter((table) => table !== 'transaction'));
const RECORDS = 3000;
const BATCHES = 3;

describe('hot reads on a database never analyzed', () => {
  const databaseUrl = scratchDatabaseUrl('nostats');
  let harness: Harness;
  let entityIds: number[] = [];
  let lastTransaction = '';
  const entityType = `T-${randomUUID()}`;

  /** Runs `read` with every statement of this process captured; the statements whose plans read a large table whole. */
  async function wholeReads(read: () => Promise<void>): Promise<{ statement: string; problems: PlanProblem[] }[]> {
    const capture = captureQueries();
    try {
      await read();
    } finally {
      capture.stop();
    }
    const statements = capture.queries.filter((query) => readStatement(query.text) !== undefined);
    expect(statements.length, 'the reads sent statements').toBeGreaterThan(0);
    const client = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
    await client.connect();
    const found: { statement: string; problems: PlanProblem[] }[] = [];
    try {
      const seen = new Set<string>();
      for (const statement of statements) {
        if (seen.has(statement.text)) continue;
        seen.add(statement.text);
        const { plan, problems } = await planProblems(client, statement, JUDGED);
        if (problems.length === 0) continue;
        console.log(`${statement.text}\n${plan}\n`);
        found.push({ statement: statement.text.replace(/\s+/g, ' ').slice(0, 300), problems });
      }
    } finally {
      await client.end();
    }
    return found;
  }

  async function ok(path: string, init: Parameters<Harness['api']>[1] = {}): Promise<string> {
    const response = await harness.api(path, init);
    const text = await response.text();
    expect(response.status, `${path}: ${text.slice(0, 300)}`).toBe(200);
    return text;
  }

  beforeAll(async () => {
    await ensureDatabase(databaseUrl);
    const orm = await openOrm(databaseUrl);
    await migrate(orm);
    await orm.close();
    harness = await startHarness({ env: { DATABASE_URL: databaseUrl, ANALYZE_AFTER_RECORDS: '0', OAI_PAGE_SIZE: '200' } });
    // Nothing may analyze them behind the test's back, where a server runs autovacuum.
    for (const table of LARGE_TABLES) await harness.sql(`alter table ${pg.escapeIdentifier(table)} set (autovacuum_enabled = false)`);
    for (let batch = 0; batch < BATCHES; batch += 1) {
      const commands = [...generateCreates(RECORDS / BATCHES, { seed: batch + 1, entityType, localIdPrefix: `b${batch}-` })];
      const xml = serializeBatch({ version: 'v2', batchUuid: randomUUID(), sender: { id: 'plans', name: 'Plans' } }, commands, 'v2');
      const submitted = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
      expect(submitted.status, await submitted.clone().text()).toBe(200);
      expect((await batchEnded(harness, (await submitted.json()) as string, 120_000)).status).toBe('COMPLETED');
    }
    entityIds = (await harness.sql<{ id: string }>('select id from entity order by id')).map((row) => Number(row.id));
    lastTransaction = (await harness.sql<{ uuid: string }>('select uuid from transaction order by commit_seq desc limit 1'))[0]!.uuid;
  }, 300_000);

  afterAll(async () => {
    await harness?.close();
    await dropScratchDatabase(databaseUrl);
  });

  it('the large tables hold the records and no statistics', async () => {
    expect(entityIds.length).toBe(RECORDS);
    expect(
      await harness.sql('select tablename from pg_stats where schemaname = current_schema() and tablename = any($1::text[])', [
        [...LARGE_TABLES],
      ]),
    ).toEqual([]);
    const tuples = await harness.sql<{ relname: string; reltuples: number }>(
      'select relname, reltuples from pg_class where relnamespace = current_schema()::regnamespace and relname = any($1::text[])',
      [[...LARGE_TABLES]],
    );
    // What the migrations left (the genesis transaction), not what the load wrote.
    for (const { relname, reltuples } of tuples) expect(reltuples, relname).toBeLessThanOrEqual(1);
  });

  it('GET of a record, v2 and v1, current and as of a revision', async () => {
    const id = entityIds[Math.floor(entityIds.length / 2)]!;
    const found = await wholeReads(async () => {
      const v2 = await ok(`/api/v2/entities/${id}`);
      await ok(`/api/v1/entities/${id}`);
      const revision = /metadataRev="([^"]+)"|revisionId="([^"]+)"/.exec(v2);
      if (revision) await harness.api(`/api/v2/entities/${id}/revision/${revision[1] ?? revision[2]}`);
    });
    expect(found).toEqual([]);
  });

  it('the change feed, v2 and v1: the summary and pages at the start and in the middle', async () => {
    const found = await wholeReads(async () => {
      for (const version of ['v2', 'v1'] as const) {
        await ok(`/api/${version}/updates/from/${GENESIS_TRANSACTION_ID}`);
        for (const page of [1, 2, 8])
          await ok(`/api/${version}/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${lastTransaction}&page=${page}&pageSize=200`);
      }
    });
    expect(found).toEqual([]);
  });

  // The name rule's holder states (domain) and the migration's partial index must agree: the index has to
  // cover every holder state, or the holders query cannot use it. A state the rule adds needs a migration.
  it("the real client's name searches, v2: pages and totals", async () => {
    const found = await wholeReads(async () => {
      for (const search of NAME_SEARCHES) {
        // The searches' types are the bench's: this file's records have a type of their own.
        const query = search.query.types ? { ...search.query, types: [entityType] } : search.query;
        const searchType = search.searchType === 'FULLTEXT' ? '&searchType=FULLTEXT' : '';
        await ok(`/api/v2/search?page=1&pageSize=20${searchType}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(v2Wire(query)),
        });
      }
    });
    expect(found).toEqual([]);
  });

  it("the partial index of name holders covers the preferred-name rule's holder states", async () => {
    const [index] = await harness.sql<{ indexdef: string }>("select indexdef from pg_indexes where indexname = 'entity_type_name_idx'");
    const predicate = / WHERE (.*)$/.exec(index!.indexdef)?.[1] ?? '';
    const indexed = [...predicate.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]);
    expect(indexed.length, index!.indexdef).toBeGreaterThan(0);
    expect(indexed).toEqual(expect.arrayContaining([...NAME_HOLDER_STATES]));
  });

  it('the end of an apply looks name holders up by the partial index, one probe per checked entry', async () => {
    const [held] = await harness.sql<{ entity_type: string; preferred_name_norm: string }>(
      'select entity_type, preferred_name_norm from entity where preferred_name_norm is not null limit 1',
    );
    const client = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
    await client.connect();
    try {
      await client.query('begin');
      // Planned generic, as a prepared statement is after a few runs: a state list sent as a parameter loses
      // the partial index there (only constants prove its predicate), which a plan for known values would hide.
      await client.query('set local plan_cache_mode = force_generic_plan');
      await client.query(CREATE_NAME_STAGE);
      await client.query(
        `insert into ${STAGED_NAMES} (seq, key, local_id, entity_id, is_new, checked, display_name) values (0, $1, 'a', 1, true, true, 'A')`,
        [`${held!.entity_type}${NAME_KEY_SEPARATOR}${held!.preferred_name_norm}`],
      );
      await client.query(`prepare key_holders as ${KEY_HOLDERS_SQL}`);
      const { rows: prepared } = await client.query<{ parameters: number }>(
        "select cardinality(parameter_types) as parameters from pg_prepared_statements where name = 'key_holders'",
      );
      const nulls = Array<string>(prepared[0]!.parameters).fill('null');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain execute key_holders(${nulls.join(', ')})`);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).toContain('entity_type_name_idx');
      expect(plan).not.toMatch(/Seq Scan on entity\b/);
    } finally {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    }
  });

  // The OAI pages plan under their transaction's settings (db/oai.ts, decision 0135), which the EXPLAIN replays.
  it('OAI-PMH: first pages, a resumed page, a record, and lists that match nothing', async () => {
    const token = (text: string) => /<resumptionToken[^>]*>([^<]+)<\/resumptionToken>/.exec(text)?.[1];
    const found = await wholeReads(async () => {
      for (const verb of ['ListIdentifiers', 'ListRecords']) {
        const first = await ok(`/oai?verb=${verb}&metadataPrefix=cam-2025`, { as: 'read' });
        const next = token(first);
        expect(next, `${verb} has a second page`).toBeDefined();
        await ok(`/oai?verb=${verb}&resumptionToken=${encodeURIComponent(next!)}`, { as: 'read' });
      }
      const listed = await ok('/oai?verb=ListIdentifiers&metadataPrefix=cam-2025', { as: 'read' });
      const identifier = /<identifier>([^<]+)<\/identifier>/.exec(listed)![1]!;
      await ok(`/oai?verb=GetRecord&metadataPrefix=cam-2025&identifier=${encodeURIComponent(identifier)}`, { as: 'read' });
      await harness.api('/oai?verb=ListIdentifiers&metadataPrefix=cam-2025&from=2999-01-01', { as: 'read' });
      await harness.api('/oai?verb=ListIdentifiers&metadataPrefix=cam-2025&set=NO_SUCH_TYPE', { as: 'read' });
    });
    expect(found).toEqual([]);
  });

  it('the activity stream: its entry point, its first and last pages, and the page after the first', async () => {
    const found = await wholeReads(async () => {
      const entry = JSON.parse(await ok('/activity-stream', { as: 'read' })) as { first: { id: string }; last: { id: string } };
      const first = JSON.parse(await ok(new URL(entry.first.id).pathname, { as: 'read' })) as { next?: { id: string } };
      expect(first.next, 'the first page has a next').toBeDefined();
      await ok(new URL(first.next!.id).pathname, { as: 'read' });
      await ok(new URL(entry.last.id).pathname, { as: 'read' });
    });
    expect(found).toEqual([]);
  });

  it('exports of every snapshot (native and EAC-CPF) and of every revision since genesis, and of a few records', async () => {
    const few = JSON.stringify([entityIds[1], entityIds[entityIds.length - 2]]);
    const found = await wholeReads(async () => {
      for (const [kind, body, format] of [
        ['snapshots', '[]', undefined],
        ['snapshots', '[]', 'eac-cpf'],
        ['revisions', '[]', undefined],
        ['snapshots', few, undefined],
        ['snapshots', few, 'eac-cpf'],
        ['revisions', few, undefined],
      ] as const) {
        const query = kind === 'revisions' ? `?fromTransId=${GENESIS_TRANSACTION_ID}` : format ? `?format=${format}` : '';
        const id = await ok(`/api/v2/export/${kind}${query}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          as: 'export',
        });
        await eventually(async () => {
          const { state } = (await (await harness.api(`/api/v2/export/status/${id}`, { as: 'read' })).json()) as { state: string };
          expect(state).not.toBe('ERROR');
          return state === 'FINISHED' ? state : undefined;
        }, 120_000);
      }
    });
    expect(found).toEqual([]);
  });

  it('after a VACUUM, a page of the change feed reads entity and revision from their indexes alone', async () => {
    // What autovacuum leaves (the visibility map); still no statistics. The last test of the file.
    await harness.sql('vacuum entity, revision');
    const capture = captureQueries();
    try {
      await ok(`/api/v1/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${lastTransaction}&page=2&pageSize=200`);
    } finally {
      capture.stop();
    }
    const pages = capture.queries.filter((query) => /from revision r join entity e|join revision r on r.seq = t.seq/.test(query.text));
    expect(pages.length, 'a feed page was read').toBeGreaterThan(0);
    const client = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
    await client.connect();
    try {
      for (const page of pages) {
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: ScanNode }] }>(`explain (format json) ${page.text}`, page.values);
        const reads = tableReads(rows[0]!['QUERY PLAN'][0].Plan).filter(
          (read) => read.startsWith('entity:') || read.startsWith('revision:'),
        );
        expect(reads.length).toBeGreaterThan(0);
        expect(
          reads.filter((read) => !read.endsWith('Index Only Scan')),
          page.text,
        ).toEqual([]);
      }
    } finally {
      await client.end();
    }
  });
});

interface ScanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: ScanNode[];
}

/** Each read of a table in a plan, as `table: node type`. */
function tableReads(node: ScanNode): string[] {
  const own = node['Relation Name'] === undefined ? [] : [`${node['Relation Name']}: ${node['Node Type']}`];
  return [...own, ...(node.Plans ?? []).flatMap(tableReads)];
}

/** A canonical search query in v2's wire spelling: upper-case condTypes. */
function v2Wire(query: SearchQuery): unknown {
  const wire = (cond: Condition): unknown => {
    const spelled: Record<string, unknown> = { ...cond, condType: cond.condType.toUpperCase() };
    if ('conds' in cond) spelled.conds = cond.conds.map(wire);
    if ('cond' in cond && cond.cond !== undefined) spelled.cond = wire(cond.cond);
    return spelled;
  };
  return query.cond === undefined ? query : { ...query, cond: wire(query.cond) };
}
