import type { ReadRouting, ReadSide } from '../../db/read-routing/index.ts';
import type { ExportRecords } from '../../db/export-records.ts';
import type { EntityRecord, EntityRef, RevisionChanges } from '../../domain/model.ts';
import { writeEntities, writeRevisions } from '../../domain/xml/index.ts';
import { requireTransaction } from './updates.ts';

// The v1 exports are synchronous: their XML is written from the export reads'
// cursor straight into the response as it is read, so memory does not grow
// with the export. (A Temporal export writes the same reads into a file:
// services/exports/write.ts.)

/** The records of streamCurrentRecordPages one at a time. */
async function* streamCurrentRecords(records: ExportRecords, refs: readonly EntityRef[]): AsyncGenerator<EntityRecord> {
  for await (const page of records.currentRecordPages(refs)) yield* page;
}

/** The change sets of revisionChangePages one at a time. */
export async function* streamRevisionChanges(
  records: ExportRecords,
  fromCommitSeq: string,
  refs: readonly EntityRef[],
): AsyncGenerator<RevisionChanges> {
  for await (const page of records.revisionChangePages(fromCommitSeq, refs, undefined, () => undefined)) yield* page;
}

/** The v1 snapshot document of the named records; an empty list names none (v2's asynchronous export takes it as "all"). */
export function v1SnapshotDocument(side: Pick<ReadSide, 'exportRecords'>, refs: readonly EntityRef[]): AsyncIterable<string> {
  return writeEntities(refs.length === 0 ? noRecords() : streamCurrentRecords(side.exportRecords, refs), 'v1');
}

/**
 * The v1 revisions document after transaction `fromTransId`. The transaction
 * is looked up before anything is written, so an unknown one is an error
 * response instead of a broken document.
 */
export async function v1RevisionsDocument(
  reads: Pick<ReadRouting, 'side'>,
  principal: string,
  fromTransId: string,
  refs: readonly EntityRef[],
): Promise<AsyncIterable<string>> {
  // On a standby that has the transaction and the client's own writes.
  const side = await reads.side({ transactions: [fromTransId], principal });
  const from = await requireTransaction(side.feed, fromTransId);
  return writeRevisions(streamRevisionChanges(side.exportRecords, from.commitSeq, refs), 'v1');
}

async function* noRecords(): AsyncGenerator<EntityRecord> {}
