// The rules of a create: the record it makes, and the identifiers it may not
// take. The planner (engine/batch/planner.ts) decides when each applies.

import { BATCH_ISSUE_CODES, type CreateEntityCommand, type EntityRecord, type Part } from '../model.ts';
import type { Problem } from './issues.ts';
import type { ResolvedRef } from './types.ts';

/** The record a create makes before any later change of the batch: new, in ERS_NEW, with its parts. */
export function createdRecord(command: CreateEntityCommand, ids: ResolvedRef, parts: Part[], now: string): EntityRecord {
  return {
    entityId: ids.entityId,
    entityUuid: ids.entityUuid,
    entityType: command.entityType,
    state: 'ERS_NEW',
    revision: { rev: '', metadataRev: '', createdAt: now, participants: [] },
    parts,
    issues: [],
  };
}

/** A localId names one entity in a batch. */
export function duplicateLocalId(localId: string): Problem {
  return { code: BATCH_ISSUE_CODES.duplicateIdentifier, message: `localId ${localId} is declared more than once in the batch.` };
}

/**
 * A client-given entity UUID a create may not take: one a stored entity
 * holds, or one an earlier create of the batch (named by its localId) uses.
 */
export function createUuidProblem(entityUuid: string, stored: boolean, earlierCreate: string | undefined): Problem | undefined {
  if (stored) return duplicateUuid(entityUuid, 'a stored entity already has it');
  if (earlierCreate !== undefined) return duplicateUuid(entityUuid, `the create ${earlierCreate} of this batch already uses it`);
  return undefined;
}

function duplicateUuid(entityUuid: string, reason: string): Problem {
  return {
    code: BATCH_ISSUE_CODES.duplicateEntityUuid,
    message: `Entity UUID ${entityUuid} cannot be used for a new entity: ${reason}.`,
    entityRef: { entityUuid },
  };
}
