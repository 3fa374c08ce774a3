import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Part, RecordChange, UserInfo } from '../../domain/model.ts';
import { serializeBatch } from '../../domain/xml/index.ts';
import { searchRepository } from '../../db/search/repository.ts';
import { searchEntities } from '../../services/search/index.ts';
import { ServiceError } from '../../services/errors.ts';
import { applyBatch } from '../support/apply.ts';
import { create, update } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// User filters read search_user_role; a search whose condition or total
// matches more than SEARCH_MAX_MATCHES is refused with a 400 that says why
// (v2 and v1), found by counting; a search statement that runs past
// SEARCH_STATEMENT_TIMEOUT_MS answers 503. The harness caps matches at two,
// so the tests that want an answer ask for pages the total shows itself (a
// short last page) or conditions that match one name.

const run = randomUUID().slice(0, 8);
/** A condition every record meets: its total is counted over the entities. */
const EVERY_NAMED = { condType: 'PART', partType: 'PT_NAME' };
const TYPE = `SL-${run}`;
const FIRST_SENDER: UserInfo = { id: `first-${run}`, name: `První Odesílatel ${run}`, uuid: randomUUID() };
const SECOND_SENDER: UserInfo = { id: `second-${run}`, name: `Druhý Odesílatel ${run}`, uuid: randomUUID() };
const EDITOR: UserInfo = { id: `editor-${run}`, name: `Eva Editorová ${run}`, uuid: randomUUID() };

const namePart = (main: string): Part => ({
  partUuid: randomUUID(),
  type: 'PT_NAME',
  items: [{ kind: 'string', type: 'NM_MAIN', value: main }],
});

describe('search limits and user filters', () => {
  let harness: Harness;
  const ids: Record<string, number> = {};

  const post = (version: 'v1' | 'v2', body: unknown, query = 'page=1&pageSize=50') =>
    harness.api(`/api/${version}/search?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  async function found(body: object, query?: string): Promise<{ count: number; ids: number[] }> {
    const response = await post('v2', body, query);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return {
      count: Number(/<count>(\d+)<\/count>/.exec(text)![1]),
      ids: [...text.matchAll(/<entityInfo [^>]*\bentityId="(\d+)"/g)].map((match) => Number(match[1])),
    };
  }

  beforeAll(async () => {
    harness = await startHarness({ env: { SEARCH_MAX_MATCHES: '2' } });
    const send = async (sender: UserInfo, commands: Parameters<typeof serializeBatch>[1]) =>
      (await applyBatch(harness, serializeBatch({ version: 'v2', batchUuid: randomUUID(), sender }, commands, 'v2'))).revisions;
    const created = await send(
      FIRST_SENDER,
      ['alpha', 'beta', 'gamma'].map((name) => create(name, '', { entityType: TYPE, parts: [namePart(`${name} ${run}`)] })),
    );
    for (const [localId, revision] of created) ids[localId] = revision.entityId;
    const rev = (localId: string) => created.get(localId)!.rev;
    const editor: RecordChange = {
      op: 'addParticipant',
      participant: { role: 'EDITOR', lastChange: '2026-01-02T03:04:05Z', user: EDITOR },
    };
    // gamma's content is now the second sender's; beta gains an editor (metadata only: its sender stays the first).
    await send(SECOND_SENDER, [
      update('gamma', ids.gamma!, rev('gamma'), [{ op: 'newPart', part: namePart(`delta ${run}`) }]),
      update('beta', ids.beta!, rev('beta'), [editor]),
    ]);
  });

  afterAll(async () => {
    await harness?.close();
  });

  describe('user filters', () => {
    it('finds the sender of the current content by UUID or name, and nothing for an unknown user', async () => {
      expect(await found({ userRoles: 'SENDER', userUuid: FIRST_SENDER.uuid })).toEqual({ count: 2, ids: [ids.alpha, ids.beta] });
      expect(await found({ userRoles: 'SENDER', userUuid: SECOND_SENDER.uuid!.toUpperCase() })).toEqual({ count: 1, ids: [ids.gamma] });
      expect(await found({ userRoles: 'SENDER', userName: FIRST_SENDER.name })).toEqual({ count: 2, ids: [ids.alpha, ids.beta] });
      expect(await found({ userRoles: 'SENDER', userUuid: randomUUID() })).toEqual({ count: 0, ids: [] });
      expect(await found({ userRoles: 'SENDER', userUuid: FIRST_SENDER.uuid, userName: FIRST_SENDER.name })).toEqual({
        count: 2,
        ids: [ids.alpha, ids.beta],
      });
      expect(await found({ userRoles: 'SENDER', userUuid: FIRST_SENDER.uuid, userName: SECOND_SENDER.name })).toEqual({
        count: 0,
        ids: [],
      });
      // A user alone in one role is counted from the user's index entries, which no cost estimate refuses.
      expect(await found({ userRoles: 'SENDER', userUuid: FIRST_SENDER.uuid }, 'page=1&pageSize=1')).toEqual({
        count: 2,
        ids: [ids.alpha],
      });
    });

    it('finds participants in their role, and a user in any role without one', async () => {
      expect(await found({ userRoles: 'EDITOR', userUuid: EDITOR.uuid })).toEqual({ count: 1, ids: [ids.beta] });
      expect(await found({ userRoles: 'APPROVER', userUuid: EDITOR.uuid })).toEqual({ count: 0, ids: [] });
      expect(await found({ userRoles: 'EDITOR', user: EDITOR.id })).toEqual({ count: 1, ids: [ids.beta] });
      expect(await found({ userRoles: 'SENDER', user: SECOND_SENDER.id })).toEqual({ count: 1, ids: [ids.gamma] });
      expect(await found({ userUuid: EDITOR.uuid })).toEqual({ count: 1, ids: [ids.beta] });
      expect(await found({ userRoles: 'EDITOR', types: [TYPE] })).toEqual({ count: 1, ids: [ids.beta] });
      expect(await found({ userRoles: 'SENDER', types: [TYPE] })).toEqual({ count: 3, ids: [ids.alpha, ids.beta, ids.gamma] });
    });

    it('keeps v1 `user` alone: a sender of any revision (by name) or a participant (by id)', async () => {
      const v1 = async (body: object) => {
        const text = await (await post('v1', body)).text();
        return [...text.matchAll(/\beid="(\d+)"/g)].map((match) => Number(match[1]));
      };
      expect(await v1({ user: FIRST_SENDER.name, types: [TYPE] })).toEqual([ids.alpha, ids.beta, ids.gamma]);
      expect(await v1({ user: EDITOR.id })).toEqual([ids.beta]);
    });
  });

  describe('refuses a search too broad to answer, with a 400 that says why', () => {
    it('a total above SEARCH_MAX_MATCHES, found by counting (v2 problem+json)', async () => {
      // A condition every record of the type meets, counted over the entities (types alone are summed from entity_count: test below).
      const response = await post('v2', { types: [TYPE], cond: EVERY_NAMED }, 'page=1&pageSize=1');
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await response.json()) as { detail: string };
      expect(problem).toMatchObject({ code: 'BadRequest', status: 400, properties: { reason: 'SearchTooBroad', maxMatches: 2 } });
      expect(problem.detail).toMatch(/too broad: it matches more than 2 records .*narrow it with entity types, states, a user/);
    });

    it('a condition matching more names than SEARCH_MAX_MATCHES, whatever the page, and one matching fewer answered', async () => {
      const name = (value: string) => ({ condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value });
      // Four names hold the run's tag (gamma has two): the index read stops at the third.
      const response = await post('v2', { types: [TYPE], cond: name(run) });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ properties: { reason: 'SearchTooBroad', maxMatches: 2 } });
      expect(await found({ types: [TYPE], cond: name(`alpha ${run}`) }, 'page=1&pageSize=1')).toEqual({ count: 1, ids: [ids.alpha] });
    });

    it('the same on v1, in its error form', async () => {
      const response = await post('v1', { types: [TYPE], cond: { condType: 'part', partType: 'PT_NAME' } }, 'page=1&pageSize=1');
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'BadRequest', properties: { reason: 'SearchTooBroad' } });
    });

    it('but not the total of types and states alone, summed from entity_count whatever the limit', async () => {
      expect(await found({ types: [TYPE] }, 'page=1&pageSize=1')).toEqual({ count: 3, ids: [ids.alpha] });
    });

    it('a text matched inside values shorter than three characters, unless types, codes or a user narrow the records', async () => {
      for (const [version, cond] of [
        ['v2', { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: 'al' }],
        ['v1', { condType: 'value', itemTypes: ['NM_MAIN'], comparator: 'CT_END_WITH', value: 'a' }],
        ['v2', { condType: 'NOT', cond: { condType: 'VALUE', comparator: 'CT_CONTAINS', value: ' a ' } }],
      ] as const) {
        const response = await post(version, { cond });
        expect(response.status, version).toBe(400);
        const problem = (await response.json()) as { detail: string; properties: unknown };
        expect(problem.properties).toEqual({ reason: 'SearchTooBroad', minLength: 3 });
        expect(problem.detail).toContain('shorter than 3 characters');
      }
      expect(
        (await found({ types: [TYPE], cond: { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: 'ta' } })).ids,
      ).toEqual([ids.beta, ids.gamma]);
    });
  });

  it('refuses a FULLTEXT text whose words begin more name words than SEARCH_MAX_MATCHES', async () => {
    // Every name of this file holds the run's tag: four names begin a word with it.
    const response = await post('v2', { text: run }, 'page=1&pageSize=10&searchType=FULLTEXT');
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { detail: string; properties: unknown };
    expect(problem.properties).toEqual({ reason: 'SearchTooBroad', maxMatches: 2 });
    expect(problem.detail).toContain('more than 2');
  });

  describe('statement timeout', () => {
    /** A pool whose connections sleep `sleepSeconds` before the page statement, in the search's own transaction. */
    function slowPool(pool: pg.Pool, sleepSeconds: number): pg.Pool {
      return {
        connect: async () => {
          const client = await pool.connect();
          const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
          const release = client.release.bind(client);
          Object.assign(client, {
            query: async (...args: unknown[]) => {
              const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
              if (text.startsWith('select e.id')) await query(`select pg_sleep(${sleepSeconds})`);
              return query(...args);
            },
            release: (error?: Error | boolean) => {
              // Back to the pool as it came (query and release are the prototype's).
              delete (client as Partial<pg.PoolClient>).query;
              delete (client as Partial<pg.PoolClient>).release;
              release(error);
            },
          });
          return client;
        },
      } as unknown as pg.Pool;
    }

    it('cancels a statement past SEARCH_STATEMENT_TIMEOUT_MS and answers ServiceUnavailable (503) saying so', async () => {
      const pool = harness.db.pool;
      const error = await searchEntities(searchRepository(slowPool(pool, 5)), { types: [TYPE] }, { page: 1, pageSize: 10 }, 'EXACT', {
        statementTimeoutMs: 50,
        maxMatches: 0,
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceError);
      expect(error).toMatchObject({ code: 'ServiceUnavailable', properties: { reason: 'SearchTimeout', statementTimeoutMs: 50 } });
      expect((error as Error).message).toMatch(/did not finish within 50 ms/);
      // SET LOCAL: the pooled connection goes back with the server's own setting.
      const { rows } = await pool.query<{ statement_timeout: string }>('show statement_timeout');
      expect(rows[0]!.statement_timeout).not.toBe('50ms');
      // Without the sleep the same search answers.
      const result = await searchEntities(harness.db.search, { types: [TYPE] }, { page: 1, pageSize: 10 }, 'EXACT', {
        statementTimeoutMs: 50,
        maxMatches: 0,
      });
      expect(result.count).toBe(3);
    });
  });
});
