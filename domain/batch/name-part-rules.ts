// The name rule a record must pass once its changes are applied.

import { BATCH_ISSUE_CODES, type EntityRecord } from '../model.ts';
import type { Problem } from './issues.ts';
import type { DrainedRule } from './types.ts';

/** A new entity needs a name; an update may not remove the last one. */
function namePartProblem(record: EntityRecord, before: EntityRecord | undefined, isNew: boolean): Problem | undefined {
  const hasName = (candidate: EntityRecord) => candidate.parts.some((part) => part.type === 'PT_NAME');
  if (hasName(record) || (before !== undefined && !hasName(before))) return undefined;
  return {
    code: BATCH_ISSUE_CODES.missingNamePart,
    message: isNew ? 'A new entity needs at least one PT_NAME part.' : 'The batch removes the last PT_NAME part of the entity.',
    partRef: { type: 'PT_NAME' },
  };
}

const NONE: readonly Problem[] = [];

/** Judged once the record is final: a batch may remove a name and add another later. */
export const namePartRule: DrainedRule = {
  name: 'MissingNamePart',
  severity: 'ERROR',
  check: ({ record, before, isNew }) => {
    const problem = namePartProblem(record, before, isNew);
    return problem === undefined ? NONE : [problem];
  },
};
