// Plans a whole batch: every command applied, in order, to working copies of
// the records it touches, giving one new revision per touched entity and
// every error and warning. Nothing is written here; the caller writes the plan
// in one transaction when it has no errors (and no warnings, unless forced).

import {
  BATCH_ISSUE_CODES,
  METADATA_OPS,
  type ChangeCommand,
  type CreateEntityCommand,
  type EntityRecord,
  type EntityRef,
  type EntityState,
  type EntityTarget,
  type Issue,
  type IssueSeverity,
  type Part,
  type RecordChange,
  type RevisionInfo,
  type UpdateEntityCommand,
} from '../model.ts';
import { applyChange } from './apply-change.ts';
import { describeRef, hasSeverity, IssueLog, itemRefOf, partRefOf, toIssue, type Problem } from './issues.ts';
import { checkNewParts, partItems, withUuids } from './parts.ts';
import { refMatches, resolveChangeTargets, resolvePartTargets, type TargetResolution } from './references.ts';
import { isActive } from './state-rules.ts';
import type { BatchPlan, BatchWorld, PlanEnv, PlannedRecord, ResolvedRef } from './types.ts';

/** Working state of one touched entity; `record` becomes the plan's `after`. */
interface Slot {
  localId: string;
  isNew: boolean;
  before?: EntityRecord;
  record: EntityRecord;
  created?: { entityType: string; parts: Part[] };
  changes: RecordChange[];
  contentChanged: boolean;
}

/** What a localId stands for anywhere in the batch (targets may point forward). */
type Declaration = { kind: 'create'; ref: ResolvedRef } | { kind: 'stored'; ref: EntityRef };

export function planBatch(commands: readonly ChangeCommand[], world: BatchWorld, env: PlanEnv): BatchPlan {
  const planner = new Planner(world, env);
  planner.declare(commands);
  for (const command of commands) {
    if (command.kind === 'create') planner.create(command);
    else planner.update(command);
  }
  return planner.finish();
}

class Planner {
  readonly #world: BatchWorld;
  readonly #env: PlanEnv;
  readonly #log = new IssueLog();
  readonly #slots: Slot[] = [];
  readonly #slotsById = new Map<number, Slot>();
  readonly #slotsByUuid = new Map<string, Slot>();
  readonly #declarations = new Map<string, Declaration>();
  readonly #createIds = new Map<CreateEntityCommand, ResolvedRef>();
  readonly #createsById = new Map<number, CreateEntityCommand>();
  readonly #createsByUuid = new Map<string, CreateEntityCommand>();
  /** Commands whose localId repeats an earlier one; reported once, then ignored. */
  readonly #ignored = new Set<ChangeCommand>();
  /** localIds that already became command subjects, so a local update may follow them. */
  readonly #subjects = new Map<string, Slot>();
  /** localIds of stored refs that failed; later local updates of them stay silent. */
  readonly #failedLocalIds = new Set<string>();

  constructor(world: BatchWorld, env: PlanEnv) {
    this.#world = world;
    this.#env = env;
  }

  /** Ids for every create up front, so that references may point at creates later in the batch. */
  declare(commands: readonly ChangeCommand[]): void {
    for (const command of commands) {
      if (command.kind === 'update' && command.entity.kind === 'local') continue;
      const localId = command.kind === 'create' ? command.localId : command.entity.localId;
      if (this.#declarations.has(localId)) {
        this.#ignored.add(command);
        this.#error(localId, { code: BATCH_ISSUE_CODES.duplicateIdentifier, message: `localId ${localId} is declared more than once in the batch.` });
        continue;
      }
      if (command.kind === 'update') {
        if (command.entity.kind === 'stored') {
          this.#declarations.set(localId, { kind: 'stored', ref: refOf(command.entity) });
        }
        continue;
      }
      const ref = { entityId: this.#env.allocateEntityId(), entityUuid: command.entityUuid ?? this.#env.newUuid() };
      this.#declarations.set(localId, { kind: 'create', ref });
      this.#createIds.set(command, ref);
      this.#createsById.set(ref.entityId, command);
      if (!this.#createsByUuid.has(ref.entityUuid)) this.#createsByUuid.set(ref.entityUuid, command);
    }
  }

  create(command: CreateEntityCommand): void {
    const ids = this.#createIds.get(command);
    if (ids === undefined) return; // its localId repeats an earlier one: reported by declare
    const problems: Problem[] = [];

    if (command.entityUuid !== undefined) {
      const first = this.#createsByUuid.get(command.entityUuid);
      if (this.#world.uuidExists(command.entityUuid)) {
        problems.push(duplicateUuid(command.entityUuid, 'a stored entity already has it'));
      } else if (first !== undefined && first !== command) {
        problems.push(duplicateUuid(command.entityUuid, `the create ${first.localId} of this batch already uses it`));
      }
    }

    const parts = command.parts.map((part) => {
      const resolved = resolvePartTargets(withUuids(part, () => this.#env.newUuid()), (target) => this.#resolve(target));
      problems.push(...resolved.problems);
      return resolved.value;
    });
    problems.push(...checkNewParts(parts, []));

    const record: EntityRecord = {
      entityId: ids.entityId,
      entityUuid: ids.entityUuid,
      entityType: command.entityType,
      state: 'ERS_NEW',
      revision: { rev: '', metadataRev: '', createdAt: this.#env.now, participants: [] },
      parts,
      issues: [],
    };
    const slot: Slot = {
      localId: command.localId,
      isNew: true,
      record,
      // Shared with the record until a change of this batch edits it (see #detachCreatedParts).
      created: { entityType: command.entityType, parts },
      changes: [],
      contentChanged: true,
    };
    this.#register(slot);
    this.#subjects.set(command.localId, slot);
    this.#errors(command.localId, problems);
  }

  update(command: UpdateEntityCommand): void {
    if (this.#ignored.has(command)) return;
    const localId = command.entity.localId;
    const slot = command.entity.kind === 'stored' ? this.#storedSubject(command.entity) : this.#subjects.get(localId);
    if (slot === undefined) {
      if (command.entity.kind === 'local' && !this.#failedLocalIds.has(localId)) {
        this.#error(localId, {
          code: BATCH_ISSUE_CODES.unknownLocalReference,
          message: `No entity with localId ${localId} is created or referenced earlier in the batch.`,
        });
      }
      return;
    }
    for (const change of command.changes) {
      const resolved = resolveChangeTargets(change, (target) => this.#resolve(target));
      if (resolved.problems.length > 0) {
        this.#errors(localId, resolved.problems);
        continue;
      }
      this.#detachCreatedParts(slot);
      const outcome = applyChange(slot.record, resolved.value, this.#env);
      if (!outcome.ok) {
        this.#errors(localId, outcome.problems);
        continue;
      }
      slot.changes.push(outcome.change);
      if (!METADATA_OPS.has(outcome.change.op)) slot.contentChanged = true;
    }
  }

  finish(): BatchPlan {
    for (const slot of this.#slots) this.#checkNamePart(slot);
    for (const slot of this.#slots) this.#checkInactiveReferences(slot);
    const records = this.#slots.map((slot) => this.#planned(slot));
    const issues = this.#log.groups();
    return { records, issues, hasErrors: hasSeverity(issues, 'ERROR'), hasWarnings: hasSeverity(issues, 'WARNING') };
  }

  #storedSubject(entity: UpdateEntityCommand['entity'] & { kind: 'stored' }): Slot | undefined {
    const ref = refOf(entity);
    const found = this.#world.findRecord(ref);
    const record = found !== undefined && refMatches(ref, found) ? found : undefined;
    if (record === undefined) {
      this.#failedLocalIds.add(entity.localId);
      this.#error(entity.localId, { code: BATCH_ISSUE_CODES.unknownEntity, message: `No stored entity matches ${describeRef(ref)}.`, entityRef: ref });
      return undefined;
    }
    // Against the rev at batch start: later updates of the same entity in this batch name the same rev.
    if (record.revision.rev !== entity.rev) {
      this.#error(entity.localId, {
        code: BATCH_ISSUE_CODES.staleRevision,
        message: `The update is based on revision ${entity.rev}, but the current revision of entity ${record.entityId} is ${record.revision.rev}.`,
        entityRef: { entityId: record.entityId, entityUuid: record.entityUuid },
      });
    }
    let slot = this.#slotsById.get(record.entityId);
    if (slot === undefined) {
      slot = { localId: entity.localId, isNew: false, before: record, record: structuredClone(record), changes: [], contentChanged: false };
      this.#register(slot);
    }
    this.#subjects.set(entity.localId, slot);
    return slot;
  }

  #register(slot: Slot): void {
    this.#slots.push(slot);
    this.#slotsById.set(slot.record.entityId, slot);
    if (!this.#slotsByUuid.has(slot.record.entityUuid)) this.#slotsByUuid.set(slot.record.entityUuid, slot);
  }

  #resolve(target: EntityTarget): TargetResolution {
    if (target.kind === 'local') {
      const declaration = this.#declarations.get(target.localId);
      if (declaration === undefined) {
        return {
          ok: false,
          problem: { code: BATCH_ISSUE_CODES.unknownLocalReference, message: `No entity with localId ${target.localId} is declared in the batch.` },
        };
      }
      if (declaration.kind === 'create') return { ok: true, ref: declaration.ref };
      return this.#resolveStored(declaration.ref);
    }
    return this.#resolveStored(target.ref);
  }

  #resolveStored(ref: EntityRef): TargetResolution {
    const found = this.#lookup(ref);
    if (found !== undefined) return { ok: true, ref: found };
    return { ok: false, problem: { code: BATCH_ISSUE_CODES.unknownEntity, message: `No entity matches ${describeRef(ref)}.`, entityRef: ref } };
  }

  /** Entities of this batch first (they may be referenced by a UUID the client chose), then the stored ones. */
  #lookup(ref: EntityRef): ResolvedRef | undefined {
    const candidates: (ResolvedRef | undefined)[] = [
      ref.entityId === undefined ? undefined : (this.#slotsById.get(ref.entityId)?.record ?? this.#createIdsById(ref.entityId)),
      ref.entityUuid === undefined ? undefined : this.#slotsByUuid.get(ref.entityUuid)?.record,
      ref.entityUuid === undefined ? undefined : this.#createIdsByUuid(ref.entityUuid),
    ];
    for (const candidate of candidates) if (candidate !== undefined && refMatches(ref, candidate)) return idsOf(candidate);
    for (const candidate of [this.#world.findRecord(ref), this.#world.findEntity(ref)]) {
      if (candidate !== undefined && refMatches(ref, candidate)) return idsOf(candidate);
    }
    return undefined;
  }

  #createIdsByUuid(entityUuid: string): ResolvedRef | undefined {
    const command = this.#createsByUuid.get(entityUuid);
    return command === undefined ? undefined : this.#createIds.get(command);
  }

  #createIdsById(entityId: number): ResolvedRef | undefined {
    const command = this.#createsById.get(entityId);
    return command === undefined ? undefined : this.#createIds.get(command);
  }

  /** State at the end of the batch, so that a batch invalidating an entity and pointing at it is warned about. */
  #stateOf(ref: ResolvedRef): EntityState | undefined {
    const slot = this.#slotsById.get(ref.entityId);
    if (slot !== undefined) return slot.record.state;
    if (this.#createsById.has(ref.entityId)) return 'ERS_NEW';
    return this.#world.findRecord(ref)?.state ?? this.#world.findEntity(ref)?.state;
  }

  /** A new entity needs a name; an update may not remove the last one. */
  #checkNamePart(slot: Slot): void {
    const hasName = (record: EntityRecord) => record.parts.some((part) => part.type === 'PT_NAME');
    if (hasName(slot.record) || (slot.before !== undefined && !hasName(slot.before))) return;
    this.#error(slot.localId, {
      code: BATCH_ISSUE_CODES.missingNamePart,
      message: slot.isNew ? 'A new entity needs at least one PT_NAME part.' : 'The batch removes the last PT_NAME part of the entity.',
      partRef: { type: 'PT_NAME' },
    });
  }

  /**
   * Only references this batch adds or changes: warning about every old
   * reference of a record would make any later edit of it need force.
   */
  #checkInactiveReferences(slot: Slot): void {
    const { record, before } = slot;
    const warnings: Problem[] = [];
    const existing = new Set<string>();
    for (const part of before?.parts ?? []) {
      for (const item of partItems(part)) if (item.kind === 'entityRef') existing.add(referenceKey(part, item));
    }
    for (const part of record.parts) {
      for (const item of partItems(part)) {
        if (item.kind !== 'entityRef' || item.target.kind !== 'stored' || existing.has(referenceKey(part, item))) continue;
        const warning = this.#inactiveReference(item.target.ref, (target) => `Item ${item.type} refers to ${target}, which`);
        if (warning === undefined) continue;
        warning.partRef = partRefOf(part.type, part.partUuid);
        warning.itemRef = itemRefOf(item);
        warnings.push(warning);
      }
    }
    if (record.replacedBy !== undefined && before?.state !== 'ERS_REPLACED') {
      const warning = this.#inactiveReference(record.replacedBy, (target) => `The replacement, ${target},`);
      if (warning !== undefined) warnings.push(warning);
    }
    this.#log.add(slot.localId, warnings.map((problem) => this.#issue(problem, 'WARNING')));
  }

  /**
   * Warnings must read the same on every attempt of a batch, or its force key
   * would never match: an entity created by the batch is therefore named by
   * its localId, not by the ids allocated for this attempt.
   */
  #inactiveReference(ref: EntityRef, subject: (target: string) => string): Problem | undefined {
    const ids = this.#lookup(ref);
    const state = ids === undefined ? undefined : this.#stateOf(ids);
    if (ids === undefined || state === undefined || isActive(state)) return undefined;
    const code = BATCH_ISSUE_CODES.referenceToInactiveEntity;
    const create = this.#createsById.get(ids.entityId);
    return create === undefined
      ? { code, message: `${subject(describeRef(ref))} is in state ${state}.`, entityRef: ref }
      : { code, message: `${subject(`the entity created as localId ${create.localId}`)} is in state ${state}.` };
  }

  /**
   * The created parts stay as they were created while the record changes on:
   * copied before the first change, so a plain create (most of a large
   * ingest) never holds its parts twice.
   */
  #detachCreatedParts(slot: Slot): void {
    if (slot.created !== undefined && slot.created.parts === slot.record.parts) slot.created.parts = structuredClone(slot.record.parts);
  }

  #planned(slot: Slot): PlannedRecord {
    const after = slot.record;
    after.revision = this.#revision(slot);
    const addedIssues = new Set(slot.changes.flatMap((change) => (change.op === 'addIssue' ? [change.issue.uuid] : [])));
    for (const issue of after.issues) if (addedIssues.has(issue.uuid)) issue.fromRev = after.revision.rev;

    const planned: PlannedRecord = {
      localId: slot.localId,
      isNew: slot.isNew,
      after,
      changes: { entityId: after.entityId, entityUuid: after.entityUuid, changes: slot.changes },
      contentChanged: slot.contentChanged,
    };
    if (slot.before !== undefined) planned.before = slot.before;
    if (slot.created !== undefined) planned.changes.created = slot.created;
    return planned;
  }

  /** A content change starts a new rev (and metadataRev); a metadata-only change keeps rev, its time and user. */
  #revision(slot: Slot): RevisionInfo {
    const participants = slot.record.revision.participants;
    const previous = slot.before?.revision;
    if (previous !== undefined && !slot.contentChanged) {
      return { ...previous, metadataRev: this.#env.newUuid(), participants };
    }
    const revision: RevisionInfo = {
      rev: this.#env.newUuid(),
      metadataRev: this.#env.newUuid(),
      user: structuredClone(this.#env.user),
      createdAt: this.#env.now,
      participants,
    };
    if (previous !== undefined) revision.prevRev = previous.rev;
    return revision;
  }

  #issue(problem: Problem, severity: IssueSeverity): Issue {
    return toIssue(problem, severity, () => this.#env.newUuid());
  }

  #error(localId: string, problem: Problem): void {
    this.#log.add(localId, [this.#issue(problem, 'ERROR')]);
  }

  #errors(localId: string, problems: readonly Problem[]): void {
    this.#log.add(localId, problems.map((problem) => this.#issue(problem, 'ERROR')));
  }
}

function refOf(entity: { entityId?: number; entityUuid?: string }): EntityRef {
  const ref: EntityRef = {};
  if (entity.entityId !== undefined) ref.entityId = entity.entityId;
  if (entity.entityUuid !== undefined) ref.entityUuid = entity.entityUuid;
  return ref;
}

function idsOf(entity: ResolvedRef): ResolvedRef {
  return { entityId: entity.entityId, entityUuid: entity.entityUuid };
}

function duplicateUuid(entityUuid: string, reason: string): Problem {
  return {
    code: BATCH_ISSUE_CODES.duplicateEntityUuid,
    message: `Entity UUID ${entityUuid} cannot be used for a new entity: ${reason}.`,
    entityRef: { entityUuid },
  };
}

function referenceKey(part: Part, item: { uuid?: string; type: string; spec?: string; target: EntityTarget }): string {
  const target = item.target.kind === 'stored' ? `${item.target.ref.entityId ?? ''}/${item.target.ref.entityUuid ?? ''}` : item.target.localId;
  return [part.partUuid, item.uuid ?? '', item.type, item.spec ?? '', target].join('|');
}
