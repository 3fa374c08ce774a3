import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Part, RevisionChanges } from '../../domain/model.ts';
import { streamRevisionChanges } from '../../services/reads/exports-stream.ts';
import { batchXml, create, namePart } from '../support/batches.ts';
import { applyBatch } from '../support/apply.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// A revision that only creates its record stores its created parts once, in
// the record (db/revision-changes.ts). These tests read the change sets back
// through the export stream and hold them to what each batch created.
describe('stored change sets of revisions', () => {
  // Test files share the database: a type of its own keeps PreferredNameExists out of the way.
  const entityType = `RC-${randomUUID()}`;
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function apply(xml: string): Promise<{ entityId: number; rev: string }> {
    return (await applyBatch(harness, xml)).revisions.get('a')!;
  }

  async function changesOf(entityId: number): Promise<RevisionChanges[]> {
    const [{ seq }] = (await harness.sql<{ seq: string }>('select min(seq) - 1 as seq from transaction')) as [{ seq: string }];
    const all: RevisionChanges[] = [];
    for await (const changes of streamRevisionChanges(harness.db.exportRecords, seq, [{ entityId }])) all.push(changes);
    return all;
  }

  /** Parts as sent: the service gives every item a uuid of its own. */
  const withoutItemUuids = (parts: Part[] | undefined) =>
    parts?.map((part) => ({ ...part, items: part.items.map(({ uuid: _uuid, ...item }) => item) }));

  it('gives a plain create its parts from the record, while current and after the record changed', async () => {
    const parts: Part[] = [
      namePart('Božena Němcová'),
      { partUuid: randomUUID(), type: 'PT_BODY', items: [{ kind: 'string', type: 'BRIEF_DESC', value: 'spisovatelka' }] },
    ];
    const created = await apply(batchXml([create('a', '', { parts, entityType })]));
    const [stored] = await harness.sql<{ changes: { created: object } }>('select changes from revision where entity_id = $1', [
      created.entityId,
    ]);
    expect(stored!.changes.created).toEqual({ entityType });

    const current = await changesOf(created.entityId);
    expect(current).toHaveLength(1);
    expect(current[0]!.created?.entityType).toBe(entityType);
    expect(withoutItemUuids(current[0]!.created?.parts)).toEqual(parts);

    const extra = namePart('Barbora Panklová');
    await apply(
      batchXml([
        {
          kind: 'update',
          entity: { kind: 'stored', localId: 'a', entityId: created.entityId, rev: created.rev },
          changes: [{ op: 'newPart', part: extra }],
        },
      ]),
    );
    const superseded = await changesOf(created.entityId);
    expect(superseded).toHaveLength(2);
    expect(superseded[0]!.created).toEqual(current[0]!.created);
    expect(superseded[1]!.created).toBeUndefined();
    expect(superseded[1]!.changes).toMatchObject([{ op: 'newPart', part: { partUuid: extra.partUuid } }]);
  });

  it('keeps the created parts of a record the same batch changed further', async () => {
    const first = namePart('Jan Neruda');
    const second = namePart('Jan Nepomuk Neruda');
    const created = await apply(
      batchXml([
        create('a', '', { parts: [first], entityType }),
        { kind: 'update', entity: { kind: 'local', localId: 'a' }, changes: [{ op: 'newPart', part: second }] },
      ]),
    );
    const [revision] = await changesOf(created.entityId);
    expect(withoutItemUuids(revision!.created?.parts)).toEqual([first]);
    expect(revision!.changes).toMatchObject([{ op: 'newPart', part: { partUuid: second.partUuid } }]);
  });
});
