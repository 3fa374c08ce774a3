// The batch planner: the batch rules (domain/batch/pipeline.ts, its phases
// "commands" and "drained") applied to every command in order, on working copies of the records it touches, giving one
// new revision per touched entity and every error and warning. Nothing is
// written here. A large batch is planned a group of commands at a time: a
// record is handed out (drain) once the last command that may change it is
// planned, so the caller can write it and let it go; what the planner keeps of
// every entity to the batch's end is in columns by declaration index (no
// object per entity). The caller writes the records in one transaction and
// keeps them only when the whole batch has no errors (and no warnings, unless
// forced).

import {
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
  type UpdateEntityCommand,
} from '../../domain/model.ts';
import { hasSeverity, IssueLog, toIssue, type Problem } from '../../domain/batch/issues.ts';
import { BATCH_PIPELINE } from '../../domain/batch/pipeline.ts';
import type { TargetResolution } from '../../domain/batch/references.ts';
import { EntityIdMap } from './entity-id-map.ts';
import { ByteColumn, NumberColumn, Uint32Column, UuidColumn } from './columns.ts';
import { refOf, BatchSurvey } from './survey.ts';
import type {
  BatchPlan,
  BatchWorld,
  DrainedRule,
  PlanEnv,
  PlanFacts,
  PlannedRecord,
  ResolvedRef,
  TargetFacts,
} from '../../domain/batch/types.ts';

const { commands: rules, drained: drainedRules } = BATCH_PIPELINE;

/** Working state of one touched entity; `record` becomes the plan's `after`. */
interface Slot {
  localId: string;
  /** Order of first touch in the batch: the order of the plan's records. */
  order: number;
  isNew: boolean;
  before?: EntityRecord;
  record: EntityRecord;
  created?: { entityType: string; parts: Part[] };
  changes: RecordChange[];
  contentChanged: boolean;
}

/**
 * In the planner's flags of a declaration (what a localId stands for anywhere
 * in the batch: targets may point forward): it became the subject of an
 * entity (#subjects; a local update may follow it); its stored ref matched
 * no entity (later local updates of it stay silent).
 */
const HAS_SUBJECT = 1;
const FAILED = 2;
/** A create whose entityUuid is its own (the survey holds it; #createUuids holds only those made here). */
const OWN_UUID = 4;

/** A judgement of a drained rule that waits for the end of the batch. */
interface Pending {
  localId: string;
  rule: DrainedRule;
  judge: () => Problem | undefined;
}

export class BatchPlanner implements PlanFacts {
  readonly #world: BatchWorld;
  readonly #env: PlanEnv;
  readonly #log = new IssueLog();
  /** Live slots by entityId, in first-touch order (a Map keeps insertion order). */
  readonly #slotsById = new Map<number, Slot>();
  readonly #slotsByUuid = new Map<string, Slot>();
  /**
   * The survey's declarations, by index; what the planner adds to them is in
   * columns by the same index (a batch of 300,000 creates keeps them to its
   * end: no object per entity).
   */
  #survey = new BatchSurvey();
  /** A create's allocated entityId, by declaration index. */
  readonly #createIds = new NumberColumn();
  /** A create's entityUuid (its own, or a new one), by declaration index. */
  readonly #createUuids = new UuidColumn();
  /** The entity a declaration became the subject of (with HAS_SUBJECT). */
  readonly #subjects = new NumberColumn();
  readonly #flags = new ByteColumn();
  /** The declaration index of each create, by its allocated entityId. */
  readonly #createsById = new EntityIdMap<number>();
  /**
   * Commands each batch entity may still be the subject of; an entity leaves
   * when its record is drained. A create's count by declaration index (plus
   * one; 0: gone), any other entity's in the Map.
   */
  readonly #remainingCreates = new Uint32Column();
  readonly #remainingStored = new Map<number, number>();
  /** State of every drained record (also: which entities the batch planned). */
  readonly #finalStates = new EntityIdMap<EntityState>();
  /** Slots whose last command has been planned, waiting for drain. */
  readonly #complete: Slot[] = [];
  readonly #pending: Pending[] = [];
  /** The record and rule #judge is running, for #later. */
  #judging: Slot | undefined;
  #judgingRule: DrainedRule | undefined;
  /** What a drained rule defers to the end of the batch. */
  readonly #later = (judge: () => Problem | undefined): void => {
    this.#pending.push({ localId: this.#judging!.localId, rule: this.#judgingRule!, judge });
  };
  #ordinal = 0;
  #slotCount = 0;

  constructor(world: BatchWorld, env: PlanEnv) {
    this.#world = world;
    this.#env = env;
  }

  get hasErrors(): boolean {
    return this.#log.hasErrors;
  }

  /** Whether the batch planned (touched) this entity; true only once its record is drained. */
  isPlanned(entityId: number): boolean {
    return this.#finalStates.has(entityId);
  }

  /**
   * Ids for every create up front, so that references may point at creates
   * later in the batch. The world must already know every stored entity the
   * survey names (summaries suffice), to count the commands each may get.
   */
  declare(survey: BatchSurvey): void {
    const duplicates = survey.duplicates;
    let next = 0;
    this.#survey = survey;
    for (let index = 0; index < survey.size; index += 1) {
      const ordinal = survey.ordinalAt(index);
      while (next < duplicates.length && duplicates[next]!.ordinal < ordinal) this.#duplicate(duplicates[next++]!.localId);
      if (survey.isCreate(index)) {
        const entityId = this.#env.allocateEntityId();
        this.#finalStates.anchor(entityId);
        this.#createsById.anchor(entityId);
        this.#createIds.set(index, entityId);
        // A create's own UUID is read from the survey when needed, not copied (16 bytes an entity of a large batch).
        if (survey.createUuidAt(index) === undefined) this.#createUuids.set(index, this.#env.newUuid());
        else this.#flags.set(index, this.#flags.get(index) | OWN_UUID);
        this.#createsById.set(entityId, index);
        this.#count(entityId, survey.touchesAt(index));
      } else {
        const ref = survey.refAt(index);
        const found = this.#world.findRecord(ref) ?? this.#world.findEntity(ref);
        if (found !== undefined) this.#count(found.entityId, survey.touchesAt(index));
      }
    }
    while (next < duplicates.length) this.#duplicate(duplicates[next++]!.localId);
  }

  /** Plans the next commands of the batch, in order (the same commands the survey saw). */
  plan(commands: readonly ChangeCommand[]): void {
    for (const command of commands) {
      const ordinal = this.#ordinal++;
      if (command.kind === 'create') this.#create(command, ordinal);
      else this.#update(command, ordinal);
    }
  }

  /**
   * The records no later command can change, planned to the end: judged by
   * the pipeline's drained rules and given their revision. The planner keeps
   * nothing of them but their state.
   */
  drain(): PlannedRecord[] {
    const slots = this.#complete.splice(0).sort((a, b) => a.order - b.order);
    for (const slot of slots) {
      this.#slotsById.delete(slot.record.entityId);
      if (this.#slotsByUuid.get(slot.record.entityUuid) === slot) this.#slotsByUuid.delete(slot.record.entityUuid);
      this.#leave(slot.record.entityId);
      this.#finalStates.set(slot.record.entityId, slot.record.state);
    }
    for (const rule of drainedRules) for (const slot of slots) this.#judge(rule, slot);
    this.#judging = undefined;
    return slots.map((slot) => this.#planned(slot));
  }

  /**
   * Ends the batch: drains every record still live (returned here, in
   * first-touch order) and runs the judgements left for the end, now that
   * every state is final.
   */
  finish(): BatchPlan {
    this.#complete.splice(0, this.#complete.length, ...this.#slotsById.values());
    const records = this.drain();
    for (const { localId, rule, judge } of this.#pending.splice(0)) {
      const problem = judge();
      if (problem !== undefined) this.#log.add(localId, [this.#issue(problem, rule.severity)]);
    }
    const issues = this.#log.groups();
    return { records, issues, hasErrors: hasSeverity(issues, 'ERROR'), hasWarnings: hasSeverity(issues, 'WARNING') };
  }

  #duplicate(localId: string): void {
    this.#error(localId, rules.duplicateLocalId(localId));
  }

  #count(entityId: number, touches: number): void {
    this.#setRemaining(entityId, (this.#remaining(entityId) ?? 0) + touches);
  }

  /** Commands the entity may still be the subject of; undefined once drained, or never counted. */
  #remaining(entityId: number): number | undefined {
    const create = this.#createsById.get(entityId);
    if (create === undefined) return this.#remainingStored.get(entityId);
    const left = this.#remainingCreates.get(create);
    return left === 0 ? undefined : left - 1;
  }

  #setRemaining(entityId: number, left: number): void {
    const create = this.#createsById.get(entityId);
    if (create === undefined) this.#remainingStored.set(entityId, left);
    else this.#remainingCreates.set(create, left + 1);
  }

  #leave(entityId: number): void {
    const create = this.#createsById.get(entityId);
    if (create === undefined) this.#remainingStored.delete(entityId);
    else this.#remainingCreates.set(create, 0);
  }

  /** A create's ids, allocated up front (declare). */
  #createIdsAt(index: number): ResolvedRef | undefined {
    const entityUuid = (this.#flags.get(index) & OWN_UUID) !== 0 ? this.#survey.createUuidAt(index) : this.#createUuids.get(index);
    return entityUuid === undefined ? undefined : { entityId: this.#createIds.get(index), entityUuid };
  }

  /** One command that may change the slot's entity has been planned. */
  #touched(slot: Slot): void {
    const id = slot.record.entityId;
    const left = this.#remaining(id);
    // Not counted (no declaration found it): the record stays live until finish.
    if (left === undefined || left <= 0) return;
    this.#setRemaining(id, left - 1);
    if (left === 1) this.#complete.push(slot);
  }

  /** The declaration this command makes, or undefined when its localId repeats an earlier one (reported by declare). */
  #ownDeclaration(localId: string, ordinal: number): number | undefined {
    const declaration = this.#survey.indexOf(localId);
    return declaration !== undefined && this.#survey.ordinalAt(declaration) === ordinal ? declaration : undefined;
  }

  #create(command: CreateEntityCommand, ordinal: number): void {
    const declaration = this.#ownDeclaration(command.localId, ordinal);
    const ids = declaration === undefined ? undefined : this.#createIdsAt(declaration);
    if (declaration === undefined || ids === undefined) return; // its localId repeats an earlier one: reported by declare
    const { record, parts, problems } = rules.create(
      command,
      ids,
      {
        uuidStored: (entityUuid) => this.#world.uuidExists(entityUuid),
        earlierCreate: (entityUuid) => {
          const first = this.#survey.createIndexOf(entityUuid);
          return first !== undefined && first !== declaration ? this.#survey.localIdAt(first) : undefined;
        },
        resolve: (target) => this.#resolve(target),
      },
      this.#env,
    );
    const slot: Slot = {
      localId: command.localId,
      order: this.#slotCount++,
      isNew: true,
      record,
      // Shared with the record until a change of this batch edits it (see #detachCreatedParts).
      created: { entityType: command.entityType, parts },
      changes: [],
      contentChanged: true,
    };
    this.#register(slot);
    this.#setSubject(declaration, ids.entityId);
    this.#errors(command.localId, problems);
    this.#touched(slot);
  }

  #update(command: UpdateEntityCommand, ordinal: number): void {
    const localId = command.entity.localId;
    let slot: Slot | undefined;
    if (command.entity.kind === 'stored') {
      const declaration = this.#ownDeclaration(localId, ordinal);
      if (declaration === undefined) return; // its localId repeats an earlier one: reported by declare
      slot = this.#storedSubject(command.entity, declaration);
    } else {
      const declaration = this.#survey.indexOf(localId);
      const flags = declaration === undefined ? 0 : this.#flags.get(declaration);
      if ((flags & HAS_SUBJECT) !== 0) {
        slot = this.#slotsById.get(this.#subjects.get(declaration!));
        if (slot === undefined) throw new Error(`internal: the record of localId ${localId} was drained before its last command`);
      } else if ((flags & FAILED) === 0) {
        this.#error(localId, rules.unknownLocalSubject(localId));
      }
    }
    if (slot === undefined) return;
    for (const change of command.changes) {
      this.#detachCreatedParts(slot);
      const outcome = rules.change(slot.record, change, (target) => this.#resolve(target), this.#env);
      if (!outcome.ok) {
        this.#errors(localId, outcome.problems);
        continue;
      }
      slot.changes.push(outcome.change);
      if (!METADATA_OPS.has(outcome.change.op)) slot.contentChanged = true;
    }
    this.#touched(slot);
  }

  #setSubject(declaration: number, entityId: number): void {
    this.#subjects.set(declaration, entityId);
    this.#flags.set(declaration, this.#flags.get(declaration) | HAS_SUBJECT);
  }

  #storedSubject(entity: UpdateEntityCommand['entity'] & { kind: 'stored' }, declaration: number): Slot | undefined {
    const ref = refOf(entity);
    const record = this.#world.findRecord(ref);
    const unknown = rules.unknownStoredSubject(ref, record);
    if (record === undefined || unknown !== undefined) {
      this.#flags.set(declaration, this.#flags.get(declaration) | FAILED);
      if (unknown !== undefined) this.#error(entity.localId, unknown);
      return undefined;
    }
    const stale = rules.staleRevision(entity.rev, record);
    if (stale !== undefined) this.#error(entity.localId, stale);
    let slot = this.#slotsById.get(record.entityId);
    if (slot === undefined) {
      if (this.#finalStates.has(record.entityId))
        throw new Error(`internal: entity ${record.entityId} was drained before its last command`);
      slot = {
        localId: entity.localId,
        order: this.#slotCount++,
        isNew: false,
        before: record,
        record: structuredClone(record),
        changes: [],
        contentChanged: false,
      };
      this.#register(slot);
    }
    this.#setSubject(declaration, record.entityId);
    return slot;
  }

  #register(slot: Slot): void {
    this.#slotsById.set(slot.record.entityId, slot);
    if (!this.#slotsByUuid.has(slot.record.entityUuid)) this.#slotsByUuid.set(slot.record.entityUuid, slot);
  }

  #resolve(target: EntityTarget): TargetResolution {
    if (target.kind === 'local') {
      const declaration = this.#survey.indexOf(target.localId);
      if (declaration === undefined) {
        return { ok: false, problem: rules.undeclaredLocalId(target.localId) };
      }
      const ids = this.#createIdsAt(declaration);
      if (ids !== undefined) return { ok: true, ref: ids };
      return this.#resolveStored(this.#survey.refAt(declaration));
    }
    return this.#resolveStored(target.ref);
  }

  #resolveStored(ref: EntityRef): TargetResolution {
    const found = this.#lookup(ref);
    if (found !== undefined) return { ok: true, ref: found };
    return { ok: false, problem: rules.unknownTarget(ref) };
  }

  /** Entities of this batch first (they may be referenced by a UUID the client chose), then the stored ones. */
  #lookup(ref: EntityRef): ResolvedRef | undefined {
    const createIds = (declaration: number | undefined) => (declaration === undefined ? undefined : this.#createIdsAt(declaration));
    const candidates: (ResolvedRef | undefined)[] = [
      ref.entityId === undefined
        ? undefined
        : (this.#slotsById.get(ref.entityId)?.record ?? createIds(this.#createsById.get(ref.entityId))),
      ref.entityUuid === undefined ? undefined : this.#slotsByUuid.get(ref.entityUuid)?.record,
      ref.entityUuid === undefined ? undefined : createIds(this.#survey.createIndexOf(ref.entityUuid)),
    ];
    for (const candidate of candidates) if (candidate !== undefined && rules.refMatches(ref, candidate)) return idsOf(candidate);
    for (const candidate of [this.#world.findRecord(ref), this.#world.findEntity(ref)]) {
      if (candidate !== undefined && rules.refMatches(ref, candidate)) return idsOf(candidate);
    }
    return undefined;
  }

  /** State at the end of the batch, so that a batch invalidating an entity and pointing at it is warned about. */
  #stateOf(ref: ResolvedRef): EntityState | undefined {
    const slot = this.#slotsById.get(ref.entityId);
    if (slot !== undefined) return slot.record.state;
    const final = this.#finalStates.get(ref.entityId);
    if (final !== undefined) return final;
    if (this.#createsById.has(ref.entityId)) return 'ERS_NEW';
    return this.#world.findRecord(ref)?.state ?? this.#world.findEntity(ref)?.state;
  }

  /** A drained rule over a final record; what must wait for the end of the batch is kept until finish. */
  #judge(rule: DrainedRule, slot: Slot): void {
    this.#judging = slot;
    this.#judgingRule = rule;
    // A Slot is a FinalRecord, and #later is made once: nothing allocated per record unless a rule raises or defers.
    const problems = rule.check(slot, this, this.#later);
    if (problems.length > 0)
      this.#log.add(
        slot.localId,
        problems.map((problem) => this.#issue(problem, rule.severity)),
      );
  }

  /** PlanFacts: the entity a reference names, with the state it ends the batch in and whether that is final yet. */
  target(ref: EntityRef): TargetFacts | undefined {
    const ids = this.#lookup(ref);
    const state = ids === undefined ? undefined : this.#stateOf(ids);
    if (ids === undefined || state === undefined) return undefined;
    return {
      state,
      final: this.#remaining(ids.entityId) === undefined,
      createdAs: () => {
        const create = this.#createsById.get(ids.entityId);
        return create === undefined ? undefined : this.#survey.localIdAt(create);
      },
    };
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
    rules.revise(after, slot.before, slot.changes, slot.contentChanged, this.#env);

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

  #issue(problem: Problem, severity: IssueSeverity): Issue {
    return toIssue(problem, severity, () => this.#env.newUuid());
  }

  #error(localId: string, problem: Problem): void {
    this.#log.add(localId, [this.#issue(problem, 'ERROR')]);
  }

  #errors(localId: string, problems: readonly Problem[]): void {
    this.#log.add(
      localId,
      problems.map((problem) => this.#issue(problem, 'ERROR')),
    );
  }
}

function idsOf(entity: ResolvedRef): ResolvedRef {
  return { entityId: entity.entityId, entityUuid: entity.entityUuid };
}
