// One RecordChange applied to a working record. A change either applies whole
// or not at all: every check runs before the record is touched.

import {
  BATCH_ISSUE_CODES,
  type EntityRecord,
  type EntityTarget,
  type Item,
  type ItemRef,
  type Participant,
  type RecordChange,
  type UserInfo,
} from '../model.ts';
import { itemRefOf, partRefOf, type Problem } from './issues.ts';
import {
  checkNewItems,
  checkNewParts,
  findItem,
  findPart,
  itemUuids,
  partSubtree,
  withItemUuids,
  withUuids,
  type ItemSlot,
} from './parts.ts';
import { checkStateChange } from './state-rules.ts';
import type { ResolvedRef } from './types.ts';

export interface ApplyContext {
  newUuid(): string;
  /** Timestamp of the batch, recorded as `from` of added issues. */
  now: string;
}

/** On success, `change` is the change as applied (uuids filled in, refs normalised) for the revision's change set. */
export type ApplyOutcome = { ok: true; change: RecordChange } | { ok: false; problems: Problem[] };

const fail = (...problems: Problem[]): ApplyOutcome => ({ ok: false, problems });
const done = (change: RecordChange): ApplyOutcome => ({ ok: true, change: structuredClone(change) });

/** Entity targets in `change` must already be resolved to stored refs (see resolveChangeTargets). */
export function applyChange(record: EntityRecord, change: RecordChange, context: ApplyContext): ApplyOutcome {
  switch (change.op) {
    case 'newPart': {
      const part = withUuids(change.part, () => context.newUuid());
      const problems = checkNewParts([part], record.parts);
      if (problems.length > 0) return fail(...problems);
      record.parts.push(part);
      return done({ op: 'newPart', part });
    }

    case 'newItems': {
      const found = findPart(record, change.part);
      if (!found.ok) return fail(found.problem);
      const part = found.value;
      const items = withItemUuids(change.items, () => context.newUuid());
      const problems = checkNewItems(part, items, itemUuids(record.parts));
      if (problems.length > 0) return fail(...problems);
      part.items.push(...items);
      return done({ op: 'newItems', part: partRefOf(part.type, part.partUuid), items });
    }

    case 'updateItems': {
      const found = findPart(record, change.part);
      if (!found.ok) return fail(found.problem);
      const part = found.value;
      const updates: { slot: ItemSlot; item: Item }[] = [];
      const problems: Problem[] = [];
      for (const item of change.items) {
        const slot = findItem(part, item);
        if (!slot.ok) {
          problems.push(slot.problem);
          continue;
        }
        const replacement = structuredClone(item);
        replacement.uuid = slot.value.list[slot.value.index]?.uuid ?? context.newUuid();
        updates.push({ slot: slot.value, item: replacement });
      }
      if (problems.length > 0) return fail(...problems);
      for (const { slot, item } of updates) slot.list[slot.index] = item;
      return done({ op: 'updateItems', part: partRefOf(part.type, part.partUuid), items: updates.map((update) => update.item) });
    }

    case 'deletePart': {
      const found = findPart(record, change.part);
      if (!found.ok) return fail(found.problem);
      const doomed = partSubtree(record.parts, found.value.partUuid);
      record.parts = record.parts.filter((part) => !doomed.has(part.partUuid));
      if (record.preferredNamePart !== undefined && doomed.has(record.preferredNamePart)) delete record.preferredNamePart;
      return done({ op: 'deletePart', part: partRefOf(found.value.type, found.value.partUuid) });
    }

    case 'deleteItems': {
      const found = findPart(record, change.part);
      if (!found.ok) return fail(found.problem);
      const part = found.value;
      const doomed = new Set<Item>();
      const refs: ItemRef[] = [];
      const problems: Problem[] = [];
      for (const ref of change.items) {
        const slot = findItem(part, ref);
        if (!slot.ok) {
          problems.push(slot.problem);
          continue;
        }
        const item = slot.value.list[slot.value.index];
        if (item === undefined) continue;
        doomed.add(item);
        refs.push(itemRefOf({ type: item.type, spec: item.spec, uuid: item.uuid }));
      }
      if (problems.length > 0) return fail(...problems);
      part.items = part.items.filter((item) => !doomed.has(item));
      if (part.extensionItems !== undefined) part.extensionItems = part.extensionItems.filter((item) => !doomed.has(item));
      return done({ op: 'deleteItems', part: partRefOf(part.type, part.partUuid), items: refs });
    }

    case 'setEntityType':
      record.entityType = change.entityType;
      return done(change);

    case 'setPreferredName': {
      const part = record.parts.find((candidate) => candidate.partUuid === change.partUuid);
      if (part === undefined || part.type !== 'PT_NAME') {
        return fail({
          code: BATCH_ISSUE_CODES.unknownPart,
          message:
            part === undefined
              ? `The entity has no part ${change.partUuid} to make its preferred name.`
              : `Part ${change.partUuid} is of type ${part.type}; only a PT_NAME part can be the preferred name.`,
          partRef: { type: 'PT_NAME', partUuid: change.partUuid },
        });
      }
      record.preferredNamePart = part.partUuid;
      return done(change);
    }

    case 'setState': {
      const replacement = resolvedReplacement(change.replacement);
      const self = { entityId: record.entityId, entityUuid: record.entityUuid };
      const problem = checkStateChange(self, record.state, change.state, replacement);
      if (problem !== undefined) return fail(problem);
      record.state = change.state;
      if (replacement === undefined) delete record.replacedBy;
      else record.replacedBy = { ...replacement };
      return done(change);
    }

    case 'addParticipant': {
      const existing = record.revision.participants.find(
        (participant) => participant.role === change.participant.role && sameUser(participant.user, change.participant.user),
      );
      if (existing === undefined) record.revision.participants.push(structuredClone(change.participant));
      else existing.lastChange = latest(existing, change.participant);
      return done(change);
    }

    case 'addIssue': {
      if (record.issues.some((issue) => issue.uuid === change.issue.uuid)) {
        return fail({ code: BATCH_ISSUE_CODES.duplicateIdentifier, message: `The entity already has an issue ${change.issue.uuid}.` });
      }
      record.issues.push({ ...structuredClone(change.issue), from: context.now });
      return done(change);
    }

    case 'removeIssue': {
      const index = record.issues.findIndex((issue) => issue.uuid === change.issueUuid);
      if (index < 0) return fail(unknownIssue(change.issueUuid));
      record.issues.splice(index, 1);
      return done(change);
    }

    case 'addIssueStatus': {
      const issue = record.issues.find((candidate) => candidate.uuid === change.issueUuid);
      if (issue === undefined) return fail(unknownIssue(change.issueUuid));
      issue.status = structuredClone(change.status);
      return done(change);
    }
  }
}

function resolvedReplacement(target: EntityTarget | undefined): ResolvedRef | undefined {
  if (target === undefined) return undefined;
  if (target.kind !== 'stored' || target.ref.entityId === undefined || target.ref.entityUuid === undefined) {
    throw new Error('applyChange needs resolved entity targets');
  }
  return { entityId: target.ref.entityId, entityUuid: target.ref.entityUuid };
}

/** The same person: by CAM uuid when both sides know it, else by the sender's user id. */
function sameUser(a: UserInfo, b: UserInfo): boolean {
  return a.uuid !== undefined && b.uuid !== undefined ? a.uuid === b.uuid : a.id === b.id;
}

/** A participant sent with an older timestamp than the one stored must not move lastChange back. */
function latest(existing: Participant, incoming: Participant): string {
  return Date.parse(existing.lastChange) > Date.parse(incoming.lastChange) ? existing.lastChange : incoming.lastChange;
}

function unknownIssue(issueUuid: string): Problem {
  return { code: BATCH_ISSUE_CODES.unknownIssue, message: `The entity has no issue ${issueUuid}.` };
}
