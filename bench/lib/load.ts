// Fills a database with N generated entities fast, writing exactly the rows
// the service writes: each chunk of the one data generator (generate.ts) is
// checked against the worker's XML reader (see chunkCommands) and applied by the worker's own code path (services/batches: storeBatch,
// markProcessing, applyBatchCommands → PlanWriter's COPY, finishBatch), one
// PostgreSQL transaction per chunk as the batch activity does. What is left
// out is Temporal, the HTTP submission, the XSD validation and the stored
// body (batch_body holds an empty body, one empty chunk, under a stand-in digest).
//
// Two things make it faster than the service on a bulk load, neither of
// which changes a row: the search_value indexes (a trigram GIN index among
// them) are dropped during the load and built once at the end, and the
// loading sessions skip foreign-key trigger checks (session_replication_role
// = replica; the rows reference what they reference because the service's
// code wrote them). Two chunks are in flight at once, so the generator and
// planner (this process) overlap with PostgreSQL's COPY.

import { createHash, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { inTransaction } from '../../db/sql.ts';
import type { BatchHeader, ChangeCommand } from '../../domain/model.ts';
import { readBatch, serializeBatch } from '../../domain/xml/index.ts';
import { applyBatchCommands } from '../../services/batches/apply.ts';
import { applyTransaction } from '../../db/apply/index.ts';
import { finishBatch, markProcessing, storeBatch } from '../../db/batches.ts';
import { DRAWS_PER_ENTITY, generateCreates, streamSeed, type NameDraw } from './generate.ts';

export interface LoadOptions {
  /** Entities per batch (one transaction each). Default 10,000. */
  chunkSize?: number;
  /** Chunks in flight at once. Default 2. */
  concurrency?: number;
  /** Generator seed. Default 1. */
  seed?: number;
  /** Entity types, one per chunk in turn, so that type filters select a share. */
  entityTypes?: readonly string[];
  /** How names are drawn (generate.ts); default evenly from short lists. */
  names?: NameDraw;
  /** Called after each chunk with the entities loaded so far. */
  onProgress?: (loaded: number, total: number) => void;
}

export interface LoadResult {
  entities: number;
  batches: number;
  seconds: number;
  /** Of which: building the search_value indexes and ANALYZE. */
  indexSeconds: number;
}

export const DEFAULT_ENTITY_TYPES = ['PERSON', 'FAMILY', 'CORPORATION', 'EVENT'] as const;

const BENCH_PRINCIPAL = 'bench';
const FORCE_KEY_SECRET = 'bench-force-key-secret-000000000000';
const DEFERRED_INDEX_TABLES = ['search_value'];

/**
 * The sender of chunk `index`: one of BENCH_SENDERS in turn, each with a CAM
 * UUID, as institutions send their records, so that user filters (userUuid,
 * userName, role SENDER) find a tenth of the records each.
 */
export const BENCH_SENDERS = 10;
export function benchSender(index: number): { id: string; name: string; uuid: string } {
  const k = index % BENCH_SENDERS;
  return { id: `bench-${k}`, name: `Benchmark ${k}`, uuid: `00000000-0000-4000-8000-${String(k).padStart(12, '0')}` };
}

/** Commands of each chunk read back from XML and compared with the generated ones (all of them for the first chunk). */
const ROUND_TRIP_SAMPLE = 200;

/**
 * The commands of chunk `index`. The worker reads its commands from the
 * batch XML; reading 10,000 back costs seconds, so a sample of each chunk
 * (the whole first chunk) is written as v2 XML, read back by the worker's
 * reader and must equal what the generator made: the rest is then what the
 * worker would have read too.
 */
async function chunkCommands(
  index: number,
  size: number,
  options: Pick<LoadOptions, 'seed' | 'entityTypes' | 'names'> = {},
): Promise<{ commands: ChangeCommand[]; header: BatchHeader }> {
  const types = options.entityTypes ?? DEFAULT_ENTITY_TYPES;
  const commands = [
    ...generateCreates(size, {
      seed: streamSeed(options.seed ?? 1, index * size * DRAWS_PER_ENTITY),
      entityType: types[index % types.length],
      localIdPrefix: `c${index}-`,
      names: options.names,
    }),
  ];
  const header: BatchHeader = { version: 'v2', batchUuid: randomUUID(), sender: benchSender(index) };
  const sample = index === 0 ? commands : commands.slice(0, ROUND_TRIP_SAMPLE);
  const read: ChangeCommand[] = [];
  const summary = await readBatch(
    (async function* () {
      yield serializeBatch(header, sample, 'v2');
    })(),
    (command) => read.push(command),
  );
  if (!isDeepStrictEqual(read, sample) || !isDeepStrictEqual(summary.header, header)) {
    throw new Error(
      `chunk ${index}: the commands read back from the batch XML differ from the generated ones; load through the XML reader instead`,
    );
  }
  return { commands, header };
}

async function applyChunk(pool: pg.Pool, index: number, size: number, options: LoadOptions): Promise<void> {
  const { commands, header } = await chunkCommands(index, size, options);
  const batchId = header.batchUuid!;
  // The body is not kept (nor serialised: see chunkCommands); a stand-in digest, unique per batch.
  const sha256 = createHash('sha256').update(`bench chunk ${index} of ${batchId}`).digest('hex');
  await inTransaction(pool, async (client) => {
    await storeBatch(client, {
      id: batchId,
      sha256,
      apiVersion: 'v2',
      submittedBy: BENCH_PRINCIPAL,
      force: false,
      changesTotal: commands.length,
      body: Buffer.alloc(0),
    });
    await markProcessing(client, batchId);
    const outcome = await applyBatchCommands(applyTransaction(client, pool), commands, {
      batchId,
      bodySha256: sha256,
      sender: header.sender,
      principal: BENCH_PRINCIPAL,
      force: false,
      forceKeySecret: FORCE_KEY_SECRET,
      commit: true,
    });
    if (outcome.outcome !== 'success') throw new Error(`chunk ${index} did not apply: ${JSON.stringify(outcome).slice(0, 2000)}`);
    await finishBatch(client, batchId, 'COMPLETED', outcome);
  });
}

/** Only a superuser may set session_replication_role; others load with the foreign-key checks (slower, same rows). */
async function canSkipTriggers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ rolsuper: boolean }>('select rolsuper from pg_roles where rolname = current_user');
    return rows[0]?.rolsuper === true;
  } finally {
    await client.end();
  }
}

/** Loads `count` generated entities into the (migrated, empty) database at `url`. */
export async function loadGeneratedEntities(url: string, count: number, options: LoadOptions = {}): Promise<LoadResult> {
  const chunkSize = options.chunkSize ?? 10_000;
  const concurrency = options.concurrency ?? 2;
  // Each chunk's transaction, and beside it a connection for the name words it adds outside the transaction.
  const pool = new pg.Pool({
    connectionString: url,
    max: 2 * concurrency,
    options: (await canSkipTriggers(url)) ? '-c session_replication_role=replica' : undefined,
  });
  const started = performance.now();
  try {
    const { rows: indexes } = await pool.query<{ name: string; definition: string }>(
      `select i.indexname as name, i.indexdef as definition
         from pg_indexes i
        where i.schemaname = current_schema() and i.tablename = any($1::text[])
          and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
      [DEFERRED_INDEX_TABLES],
    );
    for (const index of indexes) await pool.query(`drop index ${pg.escapeIdentifier(index.name)}`);

    const chunks = Math.ceil(count / chunkSize);
    let next = 0;
    let loaded = 0;
    const lane = async () => {
      for (;;) {
        const index = next++;
        if (index >= chunks) return;
        const size = Math.min(chunkSize, count - index * chunkSize);
        await applyChunk(pool, index, size, options);
        loaded += size;
        options.onProgress?.(loaded, count);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));

    const indexStarted = performance.now();
    const client = await pool.connect();
    try {
      await client.query(`set maintenance_work_mem = '1GB'`);
      for (const index of indexes) await client.query(index.definition);
      // Every table a read uses: without autovacuum (off on this machine's server) name_word would have no
      // visibility map (no index-only scans) and no statistics (estimates that make the planner JIT-compile).
      await client.query(
        'vacuum (analyze) entity, revision, transaction, batch, search_value, entity_participant, search_user_role, name_word, name_vocabulary',
      );
    } finally {
      client.release();
    }
    const seconds = (performance.now() - started) / 1000;
    return { entities: count, batches: chunks, seconds, indexSeconds: (performance.now() - indexStarted) / 1000 };
  } finally {
    await pool.end();
  }
}
