import { BATCH_ISSUE_CODES, type EntityState } from '../model.ts';
import type { Problem } from './issues.ts';
import type { ResolvedRef } from './types.ts';

/**
 * Allowed `setState` moves. ERS_REPLACED is final: the record then only
 * redirects to its replacement, and undoing that would break the chains
 * clients already followed. Every other move is allowed, including back to
 * ERS_NEW (re-approval) and out of ERS_INVALID (reactivation), because the
 * reference system leaves the workflow to its clients. Setting the current
 * state again is a no-op that still counts as a content change.
 */
export const STATE_TRANSITIONS: Readonly<Record<EntityState, readonly EntityState[]>> = {
  ERS_NEW: ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'],
  ERS_APPROVED: ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'],
  ERS_INVALID: ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'],
  ERS_REPLACED: [],
};

/** States whose entities hold no preferred name and should not be pointed at. */
const INACTIVE_STATES: ReadonlySet<EntityState> = new Set(['ERS_INVALID', 'ERS_REPLACED']);

export function isActive(state: EntityState): boolean {
  return !INACTIVE_STATES.has(state);
}

/**
 * Checks one `setState`. A replacement is required for, and only allowed
 * with, ERS_REPLACED, and must be another entity; that it exists was checked
 * when the reference was resolved.
 */
export function checkStateChange(
  self: ResolvedRef,
  from: EntityState,
  to: EntityState,
  replacement: ResolvedRef | undefined,
): Problem | undefined {
  const invalid = (message: string, entityRef?: ResolvedRef): Problem =>
    entityRef === undefined
      ? { code: BATCH_ISSUE_CODES.invalidStateChange, message }
      : { code: BATCH_ISSUE_CODES.invalidStateChange, message, entityRef };

  if (!STATE_TRANSITIONS[from].includes(to)) {
    return invalid(
      `The state cannot change from ${from} to ${to}: ${from === 'ERS_REPLACED' ? 'ERS_REPLACED is final' : 'not an allowed move'}.`,
    );
  }
  if (to === 'ERS_REPLACED' && replacement === undefined) {
    return invalid('Setting ERS_REPLACED requires a replacement entity.');
  }
  if (to !== 'ERS_REPLACED' && replacement !== undefined) {
    return invalid(`A replacement is only allowed with ERS_REPLACED, not with ${to}.`, replacement);
  }
  if (replacement !== undefined && (replacement.entityId === self.entityId || replacement.entityUuid === self.entityUuid)) {
    return invalid('An entity cannot be replaced by itself.', replacement);
  }
  return undefined;
}
