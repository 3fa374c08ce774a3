// OAI-PMH inside the long-read protections: slow harvesters hold leases
// (per address and for all anonymous harvesters together, per principal when
// signed in) shared through PostgreSQL; one more is refused with OAI-PMH's
// flow control (503, Retry-After) at once, and an ordinary client's GET is
// answered all along. The harvesters are made slow by holding an exclusive
// lock on revision, which every list page reads and a GET does not: they wait
// inside their query, seen in pg_stat_activity, never timed.
import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { errorCodes } from '../support/oai.ts';
import { oaiSchemaErrors } from '../support/oai-schema.ts';
import { eventually } from '../support/poll.ts';

const TYPE = `OAI_L_${randomUUID().slice(0, 8)}`;
const LIST = `/oai?verb=ListIdentifiers&metadataPrefix=oai_dc&set=type:${TYPE}`;

let harness: Harness;
let entityUuid: string;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  text: string;
}

/** A request from a source address of our choosing (a loopback alias: one client each). */
function send(path: string, options: { from?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const { port } = new URL(harness.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, localAddress: options.from ?? '127.0.0.1', headers: options.headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Waits until `count` list pages are waiting for the lock on revision. */
async function harvestersWaiting(count: number): Promise<void> {
  await eventually(
    async () => {
      const [row] = await harness.sql<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and datname = current_database() and query like '%from entity e%'`,
      );
      return row!.n >= count || undefined;
    },
    30_000,
    `${count} harvesters waiting inside their page's query`,
  );
}

beforeAll(async () => {
  harness = await startHarness({
    env: {
      OAI_PMH: 'public',
      ANONYMOUS_READ_RATE_LIMIT: '0',
      OAI_ANONYMOUS_PER_ADDRESS: '2',
      OAI_ANONYMOUS_TOTAL: '3',
      LONG_READS_PER_PRINCIPAL: '1',
    },
  });
  const applied = await applyBatch(harness, batchXml([create('one', 'Jedna', { entityType: TYPE })]));
  entityUuid = [...applied.revisions.values()][0]!.entityUuid;
});

afterAll(async () => harness?.close());

it('slow harvesters are held to their address, all anonymous ones together and their principal; an ordinary GET is answered', async () => {
  const get = async () => (await harness.api(`/api/v2/entities/${entityUuid}`, { as: 'read' })).status;
  const locker = new pg.Client({ connectionString: withDatabaseUser(harness.config.DATABASE_URL) });
  await locker.connect();
  const slow: Promise<Answer>[] = [];
  try {
    await locker.query('begin');
    await locker.query('lock table revision in access exclusive mode');

    // One address: two slow harvesters, the third refused at once.
    slow.push(send(LIST), send(LIST));
    await harvestersWaiting(2);
    const third = await send(LIST);
    expect(third.status).toBe(503);
    expect(Number(third.retryAfter)).toBeGreaterThan(0);
    expect(await get()).toBe(200);

    // Another address: the third anonymous harvester; a fourth address is over the cap of all anonymous ones.
    slow.push(send(LIST, { from: '127.0.0.2' }));
    await harvestersWaiting(3);
    const fourth = await send(LIST, { from: '127.0.0.3' });
    expect(fourth.status).toBe(503);
    expect(Number(fourth.retryAfter)).toBeGreaterThan(0);

    // A signed-in harvester has its principal's slots, not the anonymous ones'.
    const reader = { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } };
    slow.push(send(LIST, reader));
    await harvestersWaiting(4);
    expect((await send(LIST, reader)).status).toBe(503);
    expect(await get()).toBe(200);
  } finally {
    await locker.query('commit').catch(() => undefined);
    await locker.end();
  }
  // Every slow harvester gets its page once the lock is gone, and their leases come back.
  for (const answer of await Promise.all(slow)) {
    expect(answer.status, answer.text).toBe(200);
    expect(errorCodes(answer.text)).toEqual([]);
    expect(await oaiSchemaErrors(answer.text)).toEqual([]);
  }
  await eventually(async () => ((await send(LIST, { from: '127.0.0.3' })).status === 200 ? true : undefined), 30_000, 'a lease to be free');
});
