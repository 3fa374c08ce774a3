import type { CurrentForm, RecordRepository, RevisionList, RevisionSummary } from '../../db/records.ts';
import type { EntityRecord, EntityRef } from '../../domain/model.ts';

export type { CurrentForm, RevisionList, RevisionSummary };

// GET of one record. The reads of one event-loop turn share one statement
// (db/records.ts): the hot path of the service, so nothing is added here.

/** The current form of a record, by number or UUID; undefined when none has that number or UUID. */
export function findCurrentRecord(records: RecordRepository, ref: EntityRef): Promise<EntityRecord | undefined> {
  return records.current(ref);
}

/** For a GET of the v2 document: the document stored beside the record when there is one, else the record; undefined when there is no such record. */
export function findCurrentDocument(records: RecordRepository, ref: EntityRef): Promise<CurrentForm | undefined> {
  return records.currentDocument(ref);
}

/** The record as of one of its revisions (its rev or metadataRev); undefined when it has no such revision. */
export function findRecordAtRevision(records: RecordRepository, ref: EntityRef, revisionId: string): Promise<EntityRecord | undefined> {
  return records.atRevision(ref, revisionId);
}

/** One page of a record's revisions, newest first (page from 1); undefined when there is no such record. */
export function listRevisions(
  records: RecordRepository,
  ref: EntityRef,
  page: number,
  pageSize: number,
): Promise<RevisionList | undefined> {
  return records.revisions(ref, { offset: (page - 1) * pageSize, limit: pageSize });
}
