import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unknownTypesHeader } from '../../api/reads/search.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// Entity types are codes of the registry's data, not a closed list: a search
// by a type no record has is answered (200, count 0) and the type is named
// in X-Unknown-Entity-Types. Every closed enumeration the search takes is
// refused with a 400 that lists its valid values.
const run = randomUUID().slice(0, 8);
const TYPE = `UT-${run}`;
const ORIGIN = 'https://app.example.org';

describe('search: unknown entity types and closed enumerations', () => {
  let harness: Harness;
  const post = (version: 'v1' | 'v2', body: unknown, query = 'page=1&pageSize=20') =>
    harness.api(`/api/${version}/search?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    harness = await startHarness({ env: { CORS_ORIGINS: ORIGIN } });
    await applyBatch(harness, batchXml([create('a', `Známý ${run}`, { entityType: TYPE })]));
  });
  afterAll(async () => {
    await harness?.close();
  });

  for (const version of ['v2', 'v1'] as const) {
    it(`${version}: answers a search by types no record has, and names those types in a header a browser may read`, async () => {
      const typo = `${TYPE}S`;
      const odd = `Nový typ, ${run}`;
      const response = await post(version, { types: [TYPE, typo, odd] });
      expect(response.status).toBe(200);
      expect(await response.text()).toMatch(/<count>1<\/count>|<cnt>1<\/cnt>/);
      const header = response.headers.get('x-unknown-entity-types');
      expect(header).toBe(`${typo}, ${encodeURIComponent(odd)}`);
      expect(header!.split(', ').map(decodeURIComponent)).toEqual([typo, odd]);
      expect(response.headers.get('access-control-expose-headers')).toMatch(/X-Unknown-Entity-Types/i);
    });

    it(`${version}: sends no such header when every requested type has a record, or none was requested`, async () => {
      for (const body of [{ types: [TYPE] }, {}]) {
        const response = await post(version, body);
        expect(response.status).toBe(200);
        expect(response.headers.get('x-unknown-entity-types'), JSON.stringify(body)).toBeNull();
      }
    });
  }

  it('names a type alone in the request, which no record was ever written with', async () => {
    const response = await post('v2', { types: [`never-${run}`] });
    expect(response.headers.get('x-unknown-entity-types')).toBe(`never-${run}`);
  });

  it('keeps the header small: as many types as fit in 2000 characters', () => {
    const many = Array.from({ length: 1000 }, (_, index) => `T${index}-${'x'.repeat(190)}`);
    const value = unknownTypesHeader(many);
    expect(value.length).toBeLessThanOrEqual(2000);
    expect(value.startsWith(`T0-`)).toBe(true);
    expect(unknownTypesHeader(['\n'])).toBe('%0A');
  });

  const closed: Array<{ what: string; body: object; query?: string; values: string[] }> = [
    { what: 'searchType', body: {}, query: 'page=1&pageSize=20&searchType=FUZZY', values: ['EXACT', 'FULLTEXT'] },
    { what: 'state', body: { state: ['RS_NEWW'] }, values: ['RS_NEW', 'RS_APPROVED', 'RS_INVALID', 'RS_REPLACED'] },
    { what: 'userRoles', body: { userRoles: 'EDITORS', userName: 'x' }, values: ['EDITOR', 'APPROVER', 'SENDER'] },
    { what: 'condType', body: { cond: { condType: 'MAYBE' } }, values: ['AND', 'OR', 'NOT', 'VALUE', 'PART', 'INDEX'] },
    {
      what: 'comparator',
      body: { cond: { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_LIKE', value: 'x' } },
      values: ['CT_EQ', 'CT_CONTAINS', 'CT_STARTS_WITH'],
    },
    {
      what: 'index name',
      body: { cond: { condType: 'INDEX', name: 'NAME', comparator: 'CT_EQ', value: 'x' } },
      values: ['DISPLAY_NAME', 'SHORT_NAME', 'prefName', 'entityUuid'],
    },
    { what: 'partType', body: { cond: { condType: 'PART', partType: 'PT_PREF' } }, values: ['PT_NAME', 'PT_PREF_NAME', 'PT_BODY'] },
    {
      what: 'VALUE comparator',
      body: { cond: { condType: 'VALUE', itemTypes: ['NM_MAIN'], comparator: 'LIKE', value: 'x' } },
      values: ['CT_EQ', 'CT_ENDS_WITH'],
    },
  ];
  for (const version of ['v2', 'v1'] as const) {
    for (const { what, body, query, values } of closed) {
      it(`${version}: refuses an unknown ${what} with a 400 that lists the valid values`, async () => {
        const response = await post(version, body, query);
        const text = await response.text();
        expect(response.status, text).toBe(400);
        for (const value of values) expect(text, `${what} lists ${value}`).toContain(value);
      });
    }
  }
});
