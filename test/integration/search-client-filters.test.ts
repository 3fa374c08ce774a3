import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeCommand, Item, Part, UserInfo } from '../../domain/model.ts';
import { serializeBatch } from '../../domain/xml/index.ts';
import { compileSearch } from '../../db/search/compile.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { PUBLIC_SCHEMAS_PRESENT, publicSchemaErrors } from '../support/public-schemas.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// The filters of the known client (ELZA, github.com/elzasw/elza, branch
// release-3.0.x at eab5b917c6), sent as it sends them to POST /api/v1/search.
// Its search dialog (ApExtSearchModal) fills SearchFilterVO, and
// elza/elza-core/src/main/java/cz/tacr/elza/controller/factory/SearchFilterFactory.java
// turns it into the v1 QueryParamsDef of its generated client (null fields
// are left out of the JSON):
//   line 68:       queryParamsDef.setUser(filter.getUser());
//                  (the dialog's "Autor poslední změny", a free-text user name)
//   lines 225-229: creation (Datum vzniku) →
//                  intervalCreation = valueFrom + DEFAULT_INTERVAL_DELIMITER + valueTo
//                  createQueryValueCondDef(CRE_DATE, null, QueryComparator.CONTAIN, intervalCreation)
//                  createQueryPartCondDef(…, PartTypeEnum.CRE)
//   lines 231-235: extinction (Datum zániku), the same with EXT_DATE and PT_EXT
//   lines 185-204: each search word → index DISPLAY_NAME CT_CONTAIN, in part PT_NAME (ALL_NAMES)
//   lines 237-241: more than one condition → and
// DEFAULT_INTERVAL_DELIMITER is "-" (…/domain/convertor/UnitDateConvertorConsts.java line 33);
// valueFrom and valueTo are DateTimeFormatter.ISO_LOCAL_DATE_TIME of the
// parsed date (…/domain/convertor/UnitDateConvertor.java lines 104, 139-141, 257-261):
// "1850" → 1850-01-01T00:00:00 and 1850-12-31T23:59:59, "12.3.1850" → that
// day from 00:00:00 to 23:59:59, "-50" → -0050-01-01T00:00:00 and -0050-12-31T23:59:59.

const run = randomUUID().slice(0, 8);
const TYPE = `CF-${run}`;

const str = (type: string, value: string): Item => ({ kind: 'string', type, value });
const date = (type: string, from: string, to: string): Item => ({ kind: 'unitDate', type, from, to });
const part = (type: Part['type'], items: Item[]): Part => ({ partUuid: randomUUID(), type, items });
const person = (main: string, minor: string, parts: Part[] = []): Part[] => [
  part('PT_NAME', [str('NM_MAIN', main), ...(minor ? [str('NM_MINOR', minor)] : [])]),
  ...parts,
];
const created = (from: string, to: string) => part('PT_CRE', [date('CRE_DATE', from, to)]);
const extinct = (from: string, to: string) => part('PT_EXT', [date('EXT_DATE', from, to)]);

interface Found {
  entityId: number;
  name: string;
  lookup: string | undefined;
}

function parseQr(xml: string): { count: number; entities: Found[] } {
  const count = Number(/<cnt>(\d+)<\/cnt>/.exec(xml)![1]);
  const entities = [...xml.matchAll(/<fei ([^>]*)>(.*?)<\/fei>/gs)].map(([, attributes, body]) => ({
    entityId: Number(/\beid="(\d+)"/.exec(attributes!)![1]),
    name: /<name>(.*?)<\/name>/s.exec(body!)?.[1] ?? '',
    lookup: /<rl[^>]*><v>(.*?)<\/v>/s.exec(body!)?.[1],
  }));
  return { count, entities };
}

describe('POST /api/v1/search with the known client’s filters', () => {
  let harness: Harness;
  const ids: Record<string, number> = {};
  const revs: Record<string, string> = {};
  /** Every search answer of the tests above, checked against the public v1 XSD by the last test (skipped without it). */
  const answers: string[] = [];

  /** A v1 batch from `usr` (the v1 sender is one name: id and name alike), applied synchronously. */
  async function applyV1(usr: string, commands: ChangeCommand[]): Promise<void> {
    const sender: UserInfo = { id: usr, name: usr };
    const response = await harness.api('/api/v1/batches', {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: serializeBatch({ version: 'v1', batchUuid: randomUUID(), sender }, commands, 'v1'),
    });
    const bus = await response.text();
    expect(response.status, bus).toBe(200);
    expect(bus).toContain('<bus ');
    for (const [, attributes] of bus.matchAll(/<rev ([^>]*)\/>/g)) {
      const attribute = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attributes!)![1]!;
      ids[attribute('lid')] = Number(attribute('eid'));
      revs[attribute('lid')] = attribute('rev');
    }
  }

  async function search(body: object): Promise<{ count: number; entities: Found[] }> {
    const response = await harness.api('/api/v1/search?page=1&pageSize=50', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const xml = await response.text();
    expect(response.status, xml).toBe(200);
    answers.push(xml);
    const result = parseQr(xml);
    expect(result.count).toBe(result.entities.length);
    return result;
  }

  const found = async (body: object) => (await search(body)).entities.map((entity) => entity.entityId);
  const byId = (...localIds: string[]) => localIds.map((localId) => ids[localId]!).sort((a, b) => a - b);

  const CREATOR = `jnovak-${run}`;
  const LATER_EDITOR = `psvoboda-${run}`;
  const PARTICIPANT = `ucastnik-${run}`;

  beforeAll(async () => {
    harness = await startHarness();
    // Records by user name: two created by CREATOR, one of them changed later by LATER_EDITOR.
    await applyV1(CREATOR, [
      create('alfa', '', { entityType: TYPE, parts: person('Alfa', 'Jan') }),
      create('beta', '', { entityType: TYPE, parts: person('Beta', 'Petr') }),
    ]);
    await applyV1(LATER_EDITOR, [
      update('beta', ids.beta!, revs.beta!, [{ op: 'newPart', part: part('PT_BODY', [str('BRIEF_DESC', 'úředník')]) }]),
    ]);

    // Creation and extinction dates as the XSDs' TimeInterval holds them.
    await applyV1(CREATOR, [
      create('year1850', '', {
        entityType: TYPE,
        parts: person('Novák', 'Karel', [
          created('1850-01-01T00:00:00', '1850-12-31T23:59:59'),
          extinct('1900-01-01T00:00:00', '1900-12-31T23:59:59'),
        ]),
      }),
      create('day1850', '', { entityType: TYPE, parts: person('Dvořák', 'Jan', [created('1850-03-12T00:00:00', '1850-03-12T23:59:59')]) }),
      create('century19', '', {
        entityType: TYPE,
        parts: person('Novák', 'Josef', [created('1801-01-01T00:00:00', '1900-12-31T23:59:59')]),
      }),
      create('year1900', '', {
        entityType: TYPE,
        parts: person('Svoboda', 'Ivan', [created('1900-01-01T00:00:00', '1900-12-31T23:59:59')]),
      }),
      create('bc', '', { entityType: TYPE, parts: person('Vercingetorix', '', [created('-0100-01-01T00:00:00', '-0001-12-31T23:59:59')]) }),
    ]);

    // A participant (v2 only: v1 has no participants), who sent nothing.
    const gama = (
      await applyBatch(harness, batchXml([create('gama', '', { entityType: TYPE, parts: person('Gama', 'Eva') })]))
    ).revisions.get('gama')!;
    ids.gama = gama.entityId;
    await applyBatch(
      harness,
      batchXml([
        update('gama', gama.entityId, gama.rev, [
          {
            op: 'addParticipant',
            participant: { role: 'EDITOR', lastChange: '2026-01-02T03:04:05Z', user: { id: PARTICIPANT, name: 'Účastník' } },
          },
        ]),
      ]),
    );
  });

  afterAll(async () => {
    await harness?.close();
  });

  describe('user (SearchFilterFactory line 68: setUser(filter.getUser()))', () => {
    it('finds the records the user created or changed, and those the user takes part in', async () => {
      // The whole body ELZA sends when only "Autor poslední změny" is filled in.
      expect(await found({ user: CREATOR })).toEqual(byId('alfa', 'beta', 'year1850', 'day1850', 'century19', 'year1900', 'bc'));
      expect(await found({ user: LATER_EDITOR })).toEqual(byId('beta'));
      // Participants, as before.
      expect(await found({ user: PARTICIPANT })).toEqual(byId('gama'));
      expect(await found({ user: `nobody-${run}` })).toEqual([]);
    });

    it('is one semi-join on search_user, never a subplan per entity', async () => {
      // An OR of "sent a revision" and "takes part" as two EXISTS would be a subplan run for every entity
      // (a walk of all of them for a rare user); search_user holds both, in entity order within a user.
      const client = await harness.db.pool.connect();
      const plan = async (text: string, values: unknown[]) =>
        JSON.stringify((await client.query(`explain (format json) ${text}`, values)).rows[0]);
      try {
        await client.query('begin');
        await client.query(`insert into entity (id, uuid, entity_type, state, rev, metadata_rev, last_seq, record)
          select 900000000000 + g, gen_random_uuid(), 'EXPLAIN', 'ERS_NEW', gen_random_uuid(), gen_random_uuid(), 0, '{}' from generate_series(1, 5000) g`);
        await client.query(`insert into search_user (user_key, entity_id)
          select case when g % 1000 = 0 then 'planner-rare' else 'planner-bulk' end, 900000000000 + g from generate_series(1, 5000) g`);
        await client.query('analyze entity, search_user');
        await client.query('set local enable_seqscan = off');
        for (const user of ['planner-rare', 'planner-bulk']) {
          const compiled = compileSearch({ user }, { page: 1, pageSize: 20 }, 'EXACT');
          for (const query of [compiled.page, compiled.count]) {
            const text = await plan(query.text, query.values);
            expect(text, user).toContain('"Index Name":"search_user_pkey"');
            expect(text, user).not.toContain('SubPlan');
          }
        }
      } finally {
        await client.query('rollback');
        client.release();
      }
    });

    it('sees the senders of overlapping batches', async () => {
      // Three v1 batches at once: their revisions, and so their search_user pairs, are written in overlapping transactions.
      const senders = [`soubezny-a-${run}`, `soubezny-b-${run}`, `soubezny-c-${run}`];
      const overlapType = `CO-${run}`;
      await Promise.all(
        senders.map((usr, index) =>
          applyV1(
            usr,
            Array.from({ length: 20 }, (_, n) =>
              create(`o${index}-${n}`, '', { entityType: overlapType, parts: person(`Souběh ${index}`, String(n)) }),
            ),
          ),
        ),
      );
      for (const [index, usr] of senders.entries()) {
        const result = await search({ types: [overlapType], user: usr });
        expect(result.entities.map((entity) => entity.name)).toEqual(Array.from({ length: 20 }, (_, n) => `Souběh ${index}, ${n}`));
      }
    });

    it('combines with the types and states the dialog adds', async () => {
      // createTypeList / createStateList: codes of the chosen classes, RS_* states.
      expect(await found({ types: [TYPE], state: ['RS_NEW'], user: LATER_EDITOR })).toEqual(byId('beta'));
      expect(await found({ types: [`other-${run}`], state: ['RS_NEW'], user: LATER_EDITOR })).toEqual([]);
      expect(await found({ types: [TYPE], state: ['RS_APPROVED'], user: CREATOR })).toEqual([]);
    });
  });

  describe('creation and extinction (SearchFilterFactory lines 225-235: CRE_DATE / EXT_DATE, CONTAIN, "from-to")', () => {
    const creation = (from: string, to: string) => ({
      condType: 'part',
      partType: 'PT_CRE',
      cond: { condType: 'value', itemTypes: ['CRE_DATE'], comparator: 'CT_CONTAIN', value: `${from}-${to}` },
    });
    const extinction = (from: string, to: string) => ({
      condType: 'part',
      partType: 'PT_EXT',
      cond: { condType: 'value', itemTypes: ['EXT_DATE'], comparator: 'CT_CONTAIN', value: `${from}-${to}` },
    });

    // CONTAIN of an interval: the record's interval contains the one asked for, as ELZA's own search reads the same
    // filter (…/repository/ApCachedAccessPointRepositoryImpl.java lines 267-276: normalized from ≤ asked from, to ≥ asked to).
    it('finds the records whose date interval contains the one asked for', async () => {
      // Datum vzniku "1850": the year 1850 and the 19th century contain it; one day of 1850 does not.
      expect(await found({ types: [TYPE], cond: creation('1850-01-01T00:00:00', '1850-12-31T23:59:59') })).toEqual(
        byId('year1850', 'century19'),
      );
      // "12.3.1850": that day, the year and the century.
      expect(await found({ types: [TYPE], cond: creation('1850-03-12T00:00:00', '1850-03-12T23:59:59') })).toEqual(
        byId('year1850', 'day1850', 'century19'),
      );
      // "1900": the last year of the 19th century.
      expect(await found({ types: [TYPE], cond: creation('1900-01-01T00:00:00', '1900-12-31T23:59:59') })).toEqual(
        byId('century19', 'year1900'),
      );
      // "1850-1900" (an interval): only the century spans it.
      expect(await found({ types: [TYPE], cond: creation('1850-01-01T00:00:00', '1900-12-31T23:59:59') })).toEqual(byId('century19'));
      // Datum zániku "1900".
      expect(await found({ types: [TYPE], cond: extinction('1900-01-01T00:00:00', '1900-12-31T23:59:59') })).toEqual(byId('year1850'));
    });

    it('orders years before the common era as time does', async () => {
      // "-50": ISO_LOCAL_DATE_TIME writes the sign, so the delimiter is followed by a second minus.
      expect(await found({ types: [TYPE], cond: creation('-0050-01-01T00:00:00', '-0050-12-31T23:59:59') })).toEqual(byId('bc'));
      expect(await found({ types: [TYPE], cond: creation('-0150-01-01T00:00:00', '-0150-12-31T23:59:59') })).toEqual([]);
      expect(await found({ types: [TYPE], cond: creation('0050-01-01T00:00:00', '0050-12-31T23:59:59') })).toEqual([]);
    });

    it('combines with the search words and the other filters in one and, and shows the matched value', async () => {
      // Search "Novák" in all names (ALL_NAMES, not only the main part) and Datum vzniku "1850".
      const body = {
        types: [TYPE],
        cond: {
          condType: 'and',
          conds: [
            {
              condType: 'part',
              partType: 'PT_NAME',
              cond: { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAIN', value: 'Novák' },
            },
            creation('1850-01-01T00:00:00', '1850-12-31T23:59:59'),
          ],
        },
        user: CREATOR,
      };
      const result = await search(body);
      expect(result.entities.map((entity) => entity.entityId)).toEqual(byId('year1850', 'century19'));
      expect(result.entities.map((entity) => entity.lookup)).toEqual(['Novák, Karel', 'Novák, Josef']);
      const dateOnly = await search({ types: [TYPE], cond: creation('1850-03-12T00:00:00', '1850-03-12T23:59:59') });
      expect(dateOnly.entities.find((entity) => entity.entityId === ids.day1850)!.lookup).toBe('1850-03-12T00:00:00/1850-03-12T23:59:59');
    });
  });

  // Last: vitest runs a file's tests in order, so every answer above is here. Reported skipped where the XSDs are absent.
  it.skipIf(!PUBLIC_SCHEMAS_PRESENT)('answers every search above with a document valid against the public v1 XSD', async () => {
    expect(answers.length).toBeGreaterThan(5);
    for (const xml of answers) expect(await publicSchemaErrors(xml, 'v1'), xml).toEqual([]);
  });
});
