// OAI-PMH's pure parts: arguments checked per verb, datestamps, tokens, the
// oai_dc mapping and the writer's pieces.
import { describe, expect, it } from 'vitest';
import type { EntityRecord } from '../../domain/model.ts';
import { dublinCore } from '../../domain/oai/dublin-core.ts';
import { entityTypeOfSet, entityUuidOf, parseOaiRequest, utcDatestamp } from '../../domain/oai/protocol.ts';
import { documentElement, recordElement } from '../../domain/oai/response-writer.ts';
import { tokenCodec, type ResumptionToken } from '../../domain/oai/token.ts';

const args = (query: string) => [...new URLSearchParams(query)];
const codec = tokenCodec(['a-test-key-of-sixteen-or-more']);

describe('parseOaiRequest', () => {
  it('accepts a list request and keeps its query', () => {
    const parsed = parseOaiRequest(
      args('verb=ListRecords&metadataPrefix=cam-2025&set=type:PERSON&from=2026-01-01&until=2026-01-31'),
      codec,
    );
    expect(parsed).toEqual({
      ok: true,
      request: {
        verb: 'ListRecords',
        query: { metadataPrefix: 'cam-2025', entityType: 'PERSON', from: '2026-01-01T00:00:00.000Z', until: '2026-01-31T23:59:59.000Z' },
      },
      arguments: { verb: 'ListRecords', metadataPrefix: 'cam-2025', set: 'type:PERSON', from: '2026-01-01', until: '2026-01-31' },
    });
  });

  it.each([
    ['', 'badVerb'],
    ['verb=identify', 'badVerb'],
    ['verb=Identify&Verb=Identify', 'badArgument'],
    ['verb=GetRecord&identifier=x', 'badArgument'],
    ['verb=ListSets&set=type:X', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&from=2026-02-30', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&from=2026-01-01T24:00:00Z', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&from=2026-01-01T10:00:00', 'badArgument'],
    ['verb=ListIdentifiers&resumptionToken=abc&set=type:X', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=mods', 'cannotDisseminateFormat'],
    ['verb=ListIdentifiers&resumptionToken=abc', 'badResumptionToken'],
    ['verb=%EF%BF%BE', 'badVerb'],
    ['verb=Identify&%01=x', 'badArgument'],
    ['verb=GetRecord&metadataPrefix=oai_dc&identifier=%01', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=%01', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&set=%01', 'badArgument'],
    ['verb=ListIdentifiers&metadataPrefix=oai_dc&set=%ED%A0%80', 'noRecordsMatch'],
  ])('%s → %s', (query, code) => {
    const parsed = parseOaiRequest(args(query), codec);
    expect(parsed.ok ? undefined : parsed.error.code).toBe(code);
  });

  it('checks an argument the verb does not take before a missing required one', () => {
    const parsed = parseOaiRequest(args('verb=GetRecord&foo=1'), codec);
    expect(parsed.ok ? undefined : parsed.error.message).toMatch(/foo/);
  });
});

describe('datestamps, sets and identifiers', () => {
  it('reads days and seconds in UTC; a day as until is its last second', () => {
    expect(utcDatestamp('2026-11-27', 'from')!.toISOString()).toBe('2026-11-27T00:00:00.000Z');
    expect(utcDatestamp('2026-11-27', 'until')!.toISOString()).toBe('2026-11-27T23:59:59.000Z');
    expect(utcDatestamp('2026-11-27T16:03:02Z', 'until')!.toISOString()).toBe('2026-11-27T16:03:02.000Z');
    expect(utcDatestamp('2026-11-27T16:03:02.5Z', 'from')).toBeNull();
    expect(utcDatestamp('27.11.2026', 'from')).toBeNull();
  });

  it('maps sets to entity types and identifiers to entity UUIDs of this repository only', () => {
    expect(entityTypeOfSet('type:PERSON_INDIVIDUAL')).toBe('PERSON_INDIVIDUAL');
    expect(entityTypeOfSet('type:')).toBeUndefined();
    expect(entityTypeOfSet('PERSON')).toBeUndefined();
    const uuid = '95adcfa1-697e-4c5c-a722-2e80dbafdb23';
    expect(entityUuidOf('records.example.org', `oai:records.example.org:${uuid}`)).toBe(uuid);
    // One identifier per record: another spelling of the UUID names none.
    expect(entityUuidOf('records.example.org', `oai:records.example.org:${uuid.toUpperCase()}`)).toBeUndefined();
    expect(entityUuidOf('records.example.org', `oai:other.example.org:${uuid}`)).toBeUndefined();
    expect(entityUuidOf('records.example.org', 'oai:records.example.org:42')).toBeUndefined();
  });
});

describe('resumption tokens', () => {
  const token: ResumptionToken = {
    verb: 'ListRecords',
    query: { metadataPrefix: 'oai_dc', entityType: 'PERSON', from: '2026-01-01T00:00:00.000Z' },
    commitSeq: '1234',
    position: { kind: 'window', firstCommit: '1000', lastCommit: '1234', afterSeq: '1100', afterEntity: '99', lastSeq: '1240' },
    cursor: 1000,
  };
  const formatOne = (fields: unknown[]) => Buffer.from(JSON.stringify(fields)).toString('base64url');

  it('carry everything the next page needs, signed, and come back unchanged', () => {
    const text = codec.encode(token);
    expect(text).toMatch(/^2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(codec.decode(text)).toEqual(token);
    const counted: ResumptionToken = { ...token, position: { kind: 'entity', after: '7' }, completeListSize: 5000 };
    expect(codec.decode(codec.encode(counted))).toEqual(counted);
  });

  it('are refused when altered, or signed with another key; a key being rotated out is still accepted', () => {
    const text = codec.encode(token);
    const [, payload, signature] = text.split('.') as [string, string, string];
    const altered = Buffer.from(JSON.stringify(['ListRecords', 'oai_dc', 'PERSON', null, null, '999999', ['0'], null, 0])).toString(
      'base64url',
    );
    expect(codec.decode(`2.${altered}.${signature}`)).toBeUndefined();
    expect(codec.decode(`2.${payload}.${signature.slice(0, -2)}AA`)).toBeUndefined();
    expect(tokenCodec(['another-key-of-sixteen-chars']).decode(text)).toBeUndefined();
    expect(tokenCodec(['the-new-key-of-sixteen-chars', 'a-test-key-of-sixteen-or-more']).decode(text)).toEqual(token);
  });

  it('of format 1 (unsigned, issued before format 2) are still read, as an entity walk', () => {
    const old = formatOne([1, 'ListIdentifiers', 'cam-2025', 'GROUP', null, null, '42', '17', 12, 2]);
    expect(codec.decode(old)).toEqual({
      verb: 'ListIdentifiers',
      query: { metadataPrefix: 'cam-2025', entityType: 'GROUP' },
      commitSeq: '42',
      position: { kind: 'entity', after: '17' },
      completeListSize: 12,
      cursor: 2,
    });
  });

  it('refuse anything this repository did not issue, or could not have', () => {
    expect(codec.decode('not a token')).toBeUndefined();
    expect(codec.decode(formatOne([2, 'ListRecords', 'oai_dc', null, null, null, '1', '0', 1, 0]))).toBeUndefined();
    expect(codec.decode(formatOne([1, 'ListSets', 'oai_dc', null, null, null, '1', '0', 1, 0]))).toBeUndefined();
    expect(codec.decode(formatOne([1, 'ListRecords', 'oai_dc', null, null, null, '1; drop', '0', 1, 0]))).toBeUndefined();
    expect(codec.decode(formatOne([1, 'ListRecords', 'oai_dc', null, 'yesterday', null, '1', '0', 1, 0]))).toBeUndefined();
    expect(codec.decode(formatOne([1, 'ListRecords', 'oai_dc', null, null, null, '1', '0', -1, 0]))).toBeUndefined();
    // What PostgreSQL would refuse after the answer began: a bigint above 2^63 - 1, a day no calendar has.
    expect(codec.decode(formatOne([1, 'ListRecords', 'oai_dc', null, null, null, '9223372036854775808', '0', 1, 0]))).toBeUndefined();
    expect(codec.decode(formatOne([1, 'ListRecords', 'oai_dc', null, null, null, '1', '9999999999999999999', 1, 0]))).toBeUndefined();
    expect(codec.decode(formatOne([1, 'ListRecords', 'oai_dc', null, '2026-02-30T00:00:00.000Z', null, '1', '0', 1, 0]))).toBeUndefined();
  });
});

describe('oai_dc', () => {
  const record: EntityRecord = {
    entityId: 7,
    entityUuid: '95adcfa1-697e-4c5c-a722-2e80dbafdb23',
    entityType: 'PERSON_INDIVIDUAL',
    state: 'ERS_APPROVED',
    revision: { rev: 'r', metadataRev: 'm', createdAt: '2026-01-01T00:00:00Z', participants: [] },
    preferredNamePart: 'p2',
    parts: [
      { partUuid: 'p1', type: 'PT_NAME', items: [{ kind: 'string', type: 'NM_MAIN', value: 'Čapek' }] },
      {
        partUuid: 'p2',
        type: 'PT_NAME',
        items: [
          { kind: 'string', type: 'NM_MAIN', value: 'Čapek' },
          { kind: 'string', type: 'NM_MINOR', value: 'Karel' },
        ],
      },
      { partUuid: 'p3', type: 'PT_BODY', items: [{ kind: 'string', type: 'BRIEF_DESC', value: 'spisovatel <R.U.R.>' }] },
      { partUuid: 'p4', type: 'PT_CRE', items: [{ kind: 'unitDate', type: 'CRE_DATE', from: '1890-01-09', to: '1890-01-09' }] },
      {
        partUuid: 'p5',
        type: 'PT_REL',
        items: [
          {
            kind: 'entityRef',
            type: 'REL_ENTITY',
            target: { kind: 'stored', ref: { entityUuid: '00000000-0000-4000-8000-000000000001' } },
          },
          { kind: 'link', type: 'REL_LINK', url: 'https://example.org/capek' },
        ],
      },
    ],
    issues: [],
  };

  it('maps the preferred name first, then the other names, type, description, dates, identifiers and relations', () => {
    const dc = dublinCore(record);
    expect(dc).toMatch(/^<oai_dc:dc xmlns:oai_dc="http:\/\/www.openarchives.org\/OAI\/2.0\/oai_dc\/"/);
    const elements = [...dc.matchAll(/<dc:(\w+)>([^<]*)<\/dc:\w+>/g)].map((match) => `${match[1]}=${match[2]}`);
    expect(elements).toEqual([
      'title=Čapek, Karel',
      'title=Čapek',
      'type=PERSON_INDIVIDUAL',
      'description=spisovatel &lt;R.U.R.&gt;',
      'date=1890-01-09',
      'identifier=urn:uuid:95adcfa1-697e-4c5c-a722-2e80dbafdb23',
      'relation=urn:uuid:00000000-0000-4000-8000-000000000001',
      'relation=https://example.org/capek',
    ]);
  });
});

describe('the writer', () => {
  it('gives a deleted record its header alone, and a document without its declaration', () => {
    expect(recordElement({ identifier: 'oai:x:1', datestamp: '2026-01-01T00:00:00Z', deleted: true }, '<x/>')).toBe(
      '<record><header status="deleted"><identifier>oai:x:1</identifier><datestamp>2026-01-01T00:00:00Z</datestamp></header></record>',
    );
    expect(documentElement('<?xml version="1.0" encoding="UTF-8"?>\n<entity xmlns="n"/>')).toBe('<entity xmlns="n"/>');
  });
});
