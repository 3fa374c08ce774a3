// The problems of a command or a reference that names no entity: an update's
// subject, or the target of a reference, that neither the batch nor the store
// has. Which entity a reference names is references.ts; the planner
// (engine/batch/planner.ts) looks the names up.

import { BATCH_ISSUE_CODES, type EntityRef } from '../model.ts';
import { describeRef, type Problem } from './issues.ts';

/** An update of a local entity that no create or stored reference before it declared. */
export function unknownLocalSubject(localId: string): Problem {
  return {
    code: BATCH_ISSUE_CODES.unknownLocalReference,
    message: `No entity with localId ${localId} is created or referenced earlier in the batch.`,
  };
}

/** A reference to a localId the batch does not declare. */
export function undeclaredLocalId(localId: string): Problem {
  return { code: BATCH_ISSUE_CODES.unknownLocalReference, message: `No entity with localId ${localId} is declared in the batch.` };
}

/** An update of a stored entity that does not exist (or whose two identifiers name different entities). */
export function unknownStoredSubject(ref: EntityRef): Problem {
  return { code: BATCH_ISSUE_CODES.unknownEntity, message: `No stored entity matches ${describeRef(ref)}.`, entityRef: ref };
}

/** A reference to an entity that neither the batch nor the store has. */
export function unknownTarget(ref: EntityRef): Problem {
  return { code: BATCH_ISSUE_CODES.unknownEntity, message: `No entity matches ${describeRef(ref)}.`, entityRef: ref };
}
