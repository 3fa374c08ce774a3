import type { EntityState, PartType } from '../../domain/model.ts';

// Words a person reads for the record model's codes. Codes the service does
// not know (entity types, item types, specs) are shown as they are.

export const STATE_LABELS: Readonly<Record<EntityState, string>> = {
  ERS_NEW: 'New',
  ERS_APPROVED: 'Approved',
  ERS_INVALID: 'Invalid',
  ERS_REPLACED: 'Replaced',
};

export const PART_LABELS: Readonly<Record<PartType, string>> = {
  PT_NAME: 'Name',
  PT_BODY: 'Description',
  PT_CRE: 'Origin',
  PT_EXT: 'End',
  PT_EVENT: 'Event',
  PT_IDENT: 'Identifier',
  PT_REL: 'Relation',
};

/** A date and time of the record model (an ISO 8601 instant) as a person reads it, in UTC. */
export function readableInstant(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/** One end of a date interval item ([-]YYYY-MM-DDThh:mm:ss): its date, with the time only when it is not midnight. */
export function readableDateTime(value: string): string {
  const match = /^([-+]?\d{4,9}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})$/.exec(value);
  if (!match) return value;
  return match[2] === '00:00:00' ? match[1]! : `${match[1]} ${match[2]}`;
}
