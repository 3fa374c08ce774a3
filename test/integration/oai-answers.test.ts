// OAI-PMH answers that are always answers: signed resumption tokens (an
// altered one is badResumptionToken, one of the unsigned format issued before
// signing still ends its harvest), arguments and token fields checked before
// the status is sent (characters XML cannot carry, bigints PostgreSQL cannot
// hold, days no calendar has), ListSets of an empty registry valid against
// OAI-PMH.xsd, and baseURL from PUBLIC_URL or a trusted proxy's headers only.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenCodec } from '../../domain/oai/token.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { errorCodes, harvest, items, oaiGet, resumptionToken } from '../support/oai.ts';
import { eventually } from '../support/poll.ts';
import { oaiSchemaErrors } from '../support/oai-schema.ts';
import { migratedScratchDatabase } from '../support/scratch-database.ts';

const REPOSITORY = 'answers.example.org';
const TYPE = `OAI_A_${randomUUID().slice(0, 8)}`;
const TOKEN_SECRET = 'oai-answers-token-secret-012345';
const tokens = tokenCodec([TOKEN_SECRET]);
const env = {
  OAI_PMH: 'public',
  OAI_REPOSITORY_ID: REPOSITORY,
  OAI_PAGE_SIZE: '2',
  OAI_TOKEN_SECRET: TOKEN_SECRET,
  ANONYMOUS_READ_RATE_LIMIT: '0',
};

let harness: Harness;
const uuids: string[] = [];

/** An answer that is a well-formed OAI-PMH response (valid against OAI-PMH.xsd), with its status. */
async function wellFormed(query: string, baseUrl = harness.baseUrl, init: RequestInit = {}): Promise<string> {
  const answer = await oaiGet(baseUrl, query, init);
  expect(answer.status, answer.text).toBe(200);
  expect(await oaiSchemaErrors(answer.text), answer.text).toEqual([]);
  return answer.text;
}

/** A format-1 token (unsigned base64url of a JSON array), as tokens were issued before format 2. */
function formatOneToken(fields: { commitSeq: string; after?: string; from?: string | null; cursor?: number; size?: number }): string {
  const { commitSeq, after = '0', from = null, cursor = 0, size = 3 } = fields;
  return Buffer.from(JSON.stringify([1, 'ListIdentifiers', 'oai_dc', TYPE, from, null, commitSeq, after, size, cursor])).toString(
    'base64url',
  );
}

async function latestCommit(): Promise<string> {
  return (await harness.sql<{ c: string }>('select max(commit_seq)::text as c from transaction'))[0]!.c;
}

beforeAll(async () => {
  harness = await startHarness({ env });
  const applied = await applyBatch(
    harness,
    batchXml([
      create('a', 'Alfa', { entityType: TYPE }),
      create('b', 'Beta', { entityType: TYPE }),
      create('c', 'Gama', { entityType: TYPE }),
    ]),
  );
  for (const revision of applied.revisions.values()) uuids.push(revision.entityUuid);
});

afterAll(async () => harness?.close());

describe('resumption tokens', () => {
  it('a token altered in any field is badResumptionToken; the token as issued is served', async () => {
    const first = await wellFormed(`verb=ListIdentifiers&metadataPrefix=oai_dc&set=type:${TYPE}`);
    const issued = resumptionToken(first)!.token;
    expect(issued).toMatch(/^2\./);
    expect(errorCodes(await wellFormed(`verb=ListIdentifiers&resumptionToken=${issued}`))).toEqual([]);
    const [, payload, signature] = issued.split('.') as [string, string, string];
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    // Another commit point, another type, another position: each under the issued signature.
    for (const [index, value] of [
      [5, '1'],
      [2, 'OTHER'],
      [6, ['0']],
    ] as const) {
      const altered = [...fields];
      altered[index] = value;
      const forged = `2.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;
      expect(errorCodes(await wellFormed(`verb=ListIdentifiers&resumptionToken=${forged}`)), `field ${index}`).toEqual([
        'badResumptionToken',
      ]);
    }
    // Signed with another key (another deployment's, or a key rotated out).
    const foreign = tokenCodec(['some-other-deployments-key-0123']).encode(tokens.decode(issued)!);
    expect(errorCodes(await wellFormed(`verb=ListIdentifiers&resumptionToken=${foreign}`))).toEqual(['badResumptionToken']);
  });

  it('without OAI_TOKEN_SECRET, the key generated in DATA_DIR signs: a restarted API answers its tokens, another DATA_DIR does not', async () => {
    const { OAI_TOKEN_SECRET: _secret, ...generated } = env;
    const issuer = await startHarness({ worker: false, env: generated });
    let token: string;
    try {
      token = resumptionToken(await wellFormed(`verb=ListIdentifiers&metadataPrefix=oai_dc&set=type:${TYPE}`, issuer.baseUrl))!.token;
    } finally {
      await issuer.close();
    }
    const restarted = await startHarness({ worker: false, env: generated });
    const elsewhere = await startHarness({ worker: false, env: { ...generated, DATA_DIR: mkdtempSync(join(tmpdir(), 'er-oai-key-')) } });
    try {
      expect(errorCodes(await wellFormed(`verb=ListIdentifiers&resumptionToken=${token}`, restarted.baseUrl))).toEqual([]);
      expect(errorCodes(await wellFormed(`verb=ListIdentifiers&resumptionToken=${token}`, elsewhere.baseUrl))).toEqual([
        'badResumptionToken',
      ]);
    } finally {
      await restarted.close();
      await elsewhere.close();
    }
  });

  it('a token of the unsigned format issued before signing ends its harvest; its next pages get signed tokens', async () => {
    const old = formatOneToken({ commitSeq: await latestCommit() });
    const rest = await harvest(harness.baseUrl, `verb=ListIdentifiers&resumptionToken=${old}`);
    expect(rest.items.map((item) => item.identifier)).toEqual(uuids.map((uuid) => `oai:${REPOSITORY}:${uuid}`));
    expect(resumptionToken(rest.texts[0]!)!.token).toMatch(/^2\./);
    expect(rest.completeListSize).toBe(3);
  });

  it('a token naming a commit point beyond the latest commit, a bigint above 2^63 or a day no calendar has is badResumptionToken', async () => {
    const beyond = String(BigInt(await latestCommit()) + 1000n);
    for (const token of [
      formatOneToken({ commitSeq: beyond }),
      formatOneToken({ commitSeq: '9223372036854775808' }),
      formatOneToken({ commitSeq: '1', after: '9999999999999999999' }),
      formatOneToken({ commitSeq: '1', from: '2026-02-30T00:00:00.000Z' }),
    ]) {
      expect(errorCodes(await wellFormed(`verb=ListIdentifiers&resumptionToken=${token}`)), token).toEqual(['badResumptionToken']);
    }
  });
});

describe('arguments', () => {
  it.each([
    ['verb=%EF%BF%BE', 'badVerb'],
    ['verb=%01', 'badVerb'],
    ['verb=GetRecord&metadataPrefix=oai_dc&identifier=%01', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=%01', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&set=%01', 'badArgument'],
    ['verb=Identify&%01=x', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&from=2026-02-30', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&from=2026-01-01T23:59:60Z', 'badArgument'],
  ])('%s is answered, well-formed: %s', async (query, code) => {
    expect(errorCodes(await wellFormed(query))).toEqual([code]);
  });

  it('the same arguments by POST are answered, well-formed', async () => {
    const text = await wellFormed('', harness.baseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'verb=GetRecord&metadataPrefix=oai_dc&identifier=%01',
    });
    expect(errorCodes(text)).toEqual(['badArgument']);
  });

  it('a from later than every commit, and a set no record has, are noRecordsMatch', async () => {
    expect(errorCodes(await wellFormed('verb=ListIdentifiers&metadataPrefix=oai_dc&from=2999-01-01'))).toEqual(['noRecordsMatch']);
    expect(errorCodes(await wellFormed(`verb=ListRecords&metadataPrefix=oai_dc&set=type:NO_${TYPE}`))).toEqual(['noRecordsMatch']);
  });
});

describe('an empty registry', () => {
  it('ListSets names the parent set, valid against OAI-PMH.xsd; ListIdentifiers is noRecordsMatch', async () => {
    const database = await migratedScratchDatabase('oai');
    const empty = await startHarness({ worker: false, env: { ...env, DATABASE_URL: database.url } });
    try {
      const text = await wellFormed('verb=ListSets', empty.baseUrl);
      expect(text).toContain('<ListSets><set><setSpec>type</setSpec>');
      expect(errorCodes(await wellFormed('verb=ListIdentifiers&metadataPrefix=oai_dc', empty.baseUrl))).toEqual(['noRecordsMatch']);
      expect(errorCodes(await wellFormed('verb=ListIdentifiers&metadataPrefix=oai_dc&set=type', empty.baseUrl))).toEqual([
        'noRecordsMatch',
      ]);
    } finally {
      await empty.close();
      await database.drop();
    }
  });
});

describe('a failure after the status was sent', () => {
  // A record the writer cannot render, past the page's first cursor read (500 rows): the answer has begun with 200.
  it('ends the connection on an unfinished document and is counted as a failure (500), not 200', async () => {
    const database = await migratedScratchDatabase('oai');
    const own = await startHarness({ env: { ...env, DATABASE_URL: database.url, OAI_PAGE_SIZE: '1000' } });
    try {
      const creates = Array.from({ length: 520 }, (_, index) => create(`r${index}`, `Záznam ${index}`, { entityType: TYPE }));
      await applyBatch(own, batchXml(creates));
      await own.sql(`update entity set record = '{}'::jsonb where id = (select id from entity order by id offset 510 limit 1)`);
      const answer = await fetch(`${own.baseUrl}/oai?verb=ListRecords&metadataPrefix=oai_dc`);
      expect(answer.status).toBe(200);
      await expect(answer.text()).rejects.toThrow();
      await eventually(
        async () => {
          const metrics = await (await fetch(`${own.baseUrl}/metrics`, { headers: metricsAuthorization(own.config) })).text();
          return /^http_request_duration_seconds_count\{[^}]*route="\/oai"[^}]*status="500"[^}]*\} 1$/m.test(metrics) || undefined;
        },
        30_000,
        'the failed answer counted with status 500',
      );
      const metrics = await (await fetch(`${own.baseUrl}/metrics`, { headers: metricsAuthorization(own.config) })).text();
      expect(metrics).not.toMatch(/^http_request_duration_seconds_count\{[^}]*route="\/oai"[^}]*status="200"[^}]*\}/m);
    } finally {
      await own.close();
      await database.drop();
    }
  });
});

describe('baseURL', () => {
  const baseUrlOf = (text: string) => /<baseURL>([^<]+)<\/baseURL>/.exec(text)![1]!;
  const forwarded = { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'proxied.example.org' } };

  it('is PUBLIC_URL (scheme, host, port and path) when set, whatever the request says; schema URLs too', async () => {
    const configured = await startHarness({ worker: false, env: { ...env, PUBLIC_URL: 'https://records.example.org:8443/registry/' } });
    try {
      const identify = await wellFormed('verb=Identify', configured.baseUrl, forwarded);
      expect(baseUrlOf(identify)).toBe('https://records.example.org:8443/registry/oai');
      expect(identify).toContain('>https://records.example.org:8443/registry/oai</request>');
      const formats = await wellFormed('verb=ListMetadataFormats', configured.baseUrl);
      expect(formats).toContain('<schema>https://records.example.org:8443/registry/docs/schemas/entity-records-2025.xsd</schema>');
    } finally {
      await configured.close();
    }
  });

  it('is X-Forwarded-Proto/-Host only with TRUST_PROXY from a peer in TRUSTED_PROXIES, else the request itself', async () => {
    // The harness's own server has no trusted proxies: the headers are a client's claim, ignored.
    expect(baseUrlOf(await wellFormed('verb=Identify', harness.baseUrl, forwarded))).toBe(`${harness.baseUrl}/oai`);
    const behindProxy = await startHarness({ worker: false, env: { ...env, TRUST_PROXY: 'true', TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      expect(baseUrlOf(await wellFormed('verb=Identify', behindProxy.baseUrl, forwarded))).toBe('https://proxied.example.org/oai');
      const junk = { headers: { 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'a b' } };
      expect(baseUrlOf(await wellFormed('verb=Identify', behindProxy.baseUrl, junk))).toBe(`${behindProxy.baseUrl}/oai`);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('identifiers', () => {
  it('GetRecord of an upper-cased UUID is idDoesNotExist; the identifier as served is found', async () => {
    const identifier = `oai:${REPOSITORY}:${uuids[0]!}`;
    expect(items(await wellFormed(`verb=GetRecord&metadataPrefix=oai_dc&identifier=${identifier}`))[0]!.identifier).toBe(identifier);
    const upper = `oai:${REPOSITORY}:${uuids[0]!.toUpperCase()}`;
    expect(errorCodes(await wellFormed(`verb=GetRecord&metadataPrefix=oai_dc&identifier=${upper}`))).toEqual(['idDoesNotExist']);
  });
});
