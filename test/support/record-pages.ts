// Records for the record pages' tests (/global), applied through the real
// worker: two related people, one with another name, a link and dates and a
// second revision; a corporate body replaced by one of them; and a record
// whose name is hostile markup. Names carry a suffix of the run, so a search
// finds these records alone whatever else the database holds.
import { randomUUID } from 'node:crypto';
import type { Part } from '../../domain/model.ts';
import { applyBatch } from './apply.ts';
import { batchXml, create, namePart, update } from './batches.ts';
import type { Harness } from './harness.ts';

export const HOSTILE_NAME = '<script>alert("owned")</script> & <b>Bold</b>';

export interface RecordPagesData {
  /** A word in every name below (and in no other record's). */
  marker: string;
  /** Karel: another name, a relation to Josef, a link, a date; two revisions. */
  karel: { entityId: number; entityUuid: string; firstRev: string };
  josef: { entityId: number; entityUuid: string };
  /** A PARTY_GROUP replaced by Josef. */
  replaced: { entityId: number; entityUuid: string };
  hostile: { entityId: number; entityUuid: string };
  /** Records named `${marker} Filler NN`, of type PERSON: enough for several result pages. */
  fillers: number;
}

export async function seedRecordPages(harness: Harness, fillers = 25): Promise<RecordPagesData> {
  const marker = `Zq${randomUUID().slice(0, 8)}`;
  const josefUuid = randomUUID();
  const body = (text: string): Part => ({
    partUuid: randomUUID(),
    type: 'PT_BODY',
    items: [{ kind: 'string', type: 'BRIEF_DESC', value: text }],
  });
  const karelParts: Part[] = [
    {
      partUuid: randomUUID(),
      type: 'PT_NAME',
      items: [
        { kind: 'string', type: 'NM_MAIN', value: `Čapek ${marker}` },
        { kind: 'string', type: 'NM_MINOR', value: 'Karel' },
      ],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_NAME',
      items: [
        { kind: 'string', type: 'NM_MAIN', value: `Chapek ${marker}` },
        { kind: 'string', type: 'NM_MINOR', value: 'Charles' },
      ],
    },
    body('spisovatel'),
    {
      partUuid: randomUUID(),
      type: 'PT_CRE',
      items: [{ kind: 'unitDate', type: 'CRE_DATE', from: '1890-01-09T00:00:00', to: '1890-01-09T23:59:59' }],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_REL',
      items: [
        { kind: 'entityRef', type: 'REL_ENTITY', spec: 'RT_SIBLING', target: { kind: 'local', localId: 'josef' } },
        { kind: 'link', type: 'SOURCE_LINK', url: 'https://example.org/capek', name: 'Source' },
        { kind: 'link', type: 'SOURCE_LINK', url: 'javascript:alert(1)', name: 'Not a link' },
      ],
    },
  ];
  const first = await applyBatch(
    harness,
    batchXml([
      create('karel', '', { parts: karelParts }),
      create('josef', '', { entityUuid: josefUuid, parts: [namePart(`Čapek ${marker} Josef`), body('malíř')] }),
      create('firm', '', { entityType: 'PARTY_GROUP', parts: [namePart(`Firma ${marker}`)] }),
      create('hostile', '', {
        entityType: 'PARTY_GROUP',
        parts: [
          namePart(`${HOSTILE_NAME} ${marker}`),
          body(`<img src=x onerror=alert(1)> ${marker} ${'Donaudampfschifffahrtsgesellschaft'.repeat(4)}`),
        ],
      }),
      ...Array.from({ length: fillers }, (_, index) =>
        create(`filler-${index}`, '', { parts: [namePart(`${marker} Filler ${String(index).padStart(2, '0')}`)] }),
      ),
    ]),
  );
  const karel = first.revisions.get('karel')!;
  const josef = first.revisions.get('josef')!;
  const firm = first.revisions.get('firm')!;
  const hostile = first.revisions.get('hostile')!;
  await applyBatch(
    harness,
    batchXml([
      update('karel', karel.entityId, karel.rev, [{ op: 'newPart', part: body('novinář') }]),
      update('firm', firm.entityId, firm.rev, [
        { op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'stored', ref: { entityId: josef.entityId } } },
      ]),
    ]),
  );
  return {
    marker,
    karel: { entityId: karel.entityId, entityUuid: karel.entityUuid, firstRev: karel.rev },
    josef: { entityId: josef.entityId, entityUuid: josef.entityUuid },
    replaced: { entityId: firm.entityId, entityUuid: firm.entityUuid },
    hostile: { entityId: hostile.entityId, entityUuid: hostile.entityUuid },
    fillers,
  };
}
