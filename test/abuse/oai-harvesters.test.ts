import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { errorCodes, resumptionToken } from '../support/oai.ts';
import { eventually } from '../support/poll.ts';

// Hostile OAI-PMH harvesters on a public endpoint: 24 slow anonymous
// harvesters, from one address and from 24 (loopback aliases), hold at most
// their address's and all anonymous harvesters' leases (the defaults, 2 and
// 8); the rest are refused 503 with Retry-After, and an ordinary client's
// GET is answered meanwhile. They are made slow by an exclusive lock on
// revision, which every list page reads and a GET does not. A forged
// resumption token is badResumptionToken.

const TYPE = `OAI_X_${randomUUID().slice(0, 8)}`;
const LIST = `/oai?verb=ListIdentifiers&metadataPrefix=oai_dc&set=type:${TYPE}`;
const HARVESTERS = 24;

let harness: Harness;
let entityUuid: string;

function send(path: string, from: string): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  const { port } = new URL(harness.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitingPages(): Promise<number> {
  const [row] = await harness.sql<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and query like '%from entity e%'`,
  );
  return row!.n;
}

beforeAll(async () => {
  harness = await startHarness({
    env: {
      OAI_PMH: 'public',
      OAI_PAGE_SIZE: '1',
      ANONYMOUS_READ_RATE_LIMIT: '0',
      OAI_ANONYMOUS_PER_ADDRESS: '2',
      OAI_ANONYMOUS_TOTAL: '8',
    },
  });
  const applied = await applyBatch(
    harness,
    batchXml([create('one', 'Jedna', { entityType: TYPE }), create('two', 'Dva', { entityType: TYPE })]),
  );
  entityUuid = [...applied.revisions.values()][0]!.entityUuid;
});

afterAll(async () => harness?.close());

describe('slow anonymous harvesters', () => {
  it.each([
    ['from 24 addresses', (index: number) => `127.0.0.${20 + index}`, 8],
    ['from one address', () => '127.0.0.1', 2],
  ])('%s hold at most their leases; the rest are refused with Retry-After; an ordinary GET is answered', async (_what, addressOf, held) => {
    const locker = new pg.Client({ connectionString: withDatabaseUser(harness.config.DATABASE_URL) });
    await locker.connect();
    const answers: ReturnType<typeof send>[] = [];
    let settled = 0;
    try {
      await locker.query('begin');
      await locker.query('lock table revision in access exclusive mode');
      for (let index = 0; index < HARVESTERS; index += 1) {
        const answer = send(LIST, addressOf(index));
        void answer.then(() => (settled += 1)).catch(() => undefined);
        answers.push(answer);
      }
      // The held ones wait inside their page's query; every other one has its answer already.
      await eventually(async () => ((await waitingPages()) >= held ? true : undefined), 60_000, `${held} harvesters waiting`);
      await eventually(
        async () => (settled === HARVESTERS - held ? true : undefined),
        60_000,
        'every harvester beyond the leases answered',
      );
      expect(await waitingPages()).toBe(held);
      expect((await harness.api(`/api/v2/entities/${entityUuid}`, { as: 'read' })).status).toBe(200);
    } finally {
      await locker.query('commit').catch(() => undefined);
      await locker.end();
    }
    const outcomes = await Promise.all(answers);
    expect(outcomes.filter((answer) => answer.status === 200)).toHaveLength(held);
    const refusals = outcomes.filter((answer) => answer.status !== 200);
    expect(refusals).toHaveLength(HARVESTERS - held);
    for (const refusal of refusals) {
      expect(refusal.status).toBe(503);
      expect(Number(refusal.retryAfter)).toBeGreaterThan(0);
    }
  });
});

describe('a forged resumption token', () => {
  it('is badResumptionToken, and the token as issued is served', async () => {
    // The held harvesters above release their leases (in PostgreSQL) once their answers are written, which may come
    // just after their clients have read them: until then this address is refused 503.
    const issued = await eventually(
      async () => {
        const first = await fetch(`${harness.baseUrl}${LIST}`);
        return first.status === 503 ? undefined : resumptionToken(await first.text())?.token;
      },
      30_000,
      'a first page with a resumption token',
    );
    const served = await fetch(`${harness.baseUrl}/oai?verb=ListIdentifiers&resumptionToken=${issued}`).then((r) => r.text());
    expect(errorCodes(served)).toEqual([]);
    const [, payload, signature] = issued.split('.') as [string, string, string];
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    fields[5] = '999999999';
    const forged = `2.${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${signature}`;
    const answer = await fetch(`${harness.baseUrl}/oai?verb=ListIdentifiers&resumptionToken=${forged}`);
    expect(answer.status).toBe(200);
    expect(errorCodes(await answer.text())).toEqual(['badResumptionToken']);
  });
});
