// The rules of revisions: which rev an update may build on, which revision a
// change gets, and which rev the issues it adds are from.

import { BATCH_ISSUE_CODES, type EntityRecord, type RecordChange, type RevisionInfo } from '../model.ts';
import type { Problem } from './issues.ts';
import type { PlanEnv } from './types.ts';

/** An update names the rev it is based on; against the rev at batch start, so later updates of the same entity name the same rev. */
export function staleRevision(basedOn: string, record: EntityRecord): Problem | undefined {
  if (record.revision.rev === basedOn) return undefined;
  return {
    code: BATCH_ISSUE_CODES.staleRevision,
    message: `The update is based on revision ${basedOn}, but the current revision of entity ${record.entityId} is ${record.revision.rev}.`,
    entityRef: { entityId: record.entityId, entityUuid: record.entityUuid },
  };
}

/** A content change starts a new rev (and metadataRev); a metadata-only change keeps rev, its time and user. */
export function nextRevision(
  previous: RevisionInfo | undefined,
  contentChanged: boolean,
  participants: RevisionInfo['participants'],
  env: PlanEnv,
): RevisionInfo {
  if (previous !== undefined && !contentChanged) return { ...previous, metadataRev: env.newUuid(), participants };
  const revision: RevisionInfo = {
    rev: env.newUuid(),
    metadataRev: env.newUuid(),
    user: structuredClone(env.user),
    createdAt: env.now,
    participants,
  };
  if (previous !== undefined) revision.prevRev = previous.rev;
  return revision;
}

/** An issue this revision adds is from this revision's rev. */
export function dateAddedIssues(record: EntityRecord, changes: readonly RecordChange[]): void {
  const added = new Set(changes.flatMap((change) => (change.op === 'addIssue' ? [change.issue.uuid] : [])));
  for (const issue of record.issues) if (added.has(issue.uuid)) issue.fromRev = record.revision.rev;
}
