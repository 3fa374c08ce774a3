import type { EntityIssues, EntityRecord, EntityRef, EntityState, IssueSeverity, RevisionChanges, UserInfo } from '../model.ts';
import type { Problem } from './issues.ts';

/** A stored entity the batch only points at (entityRef items, replacements). */
export interface EntitySummary {
  entityId: number;
  entityUuid: string;
  state: EntityState;
}

/** Both identifiers of an entity, as references are written once resolved. */
export interface ResolvedRef {
  entityId: number;
  entityUuid: string;
}

/**
 * What the caller preloaded from the database before planning (see
 * `BatchSurvey.lookups()` for what to load). Lookups take a partial ref; when a ref
 * carries both identifiers the planner itself checks that they name one entity.
 */
export interface BatchWorld {
  /** Current record of a stored entity that an update names. */
  findRecord(ref: EntityRef): EntityRecord | undefined;
  /** Any other stored entity the batch references; records found by `findRecord` need not be repeated. */
  findEntity(ref: EntityRef): EntitySummary | undefined;
  /** Whether a stored entity already holds this UUID (asked for creates that bring their own). */
  uuidExists(entityUuid: string): boolean;
}

/** The impure inputs, injected so that planning is deterministic under test. */
export interface PlanEnv {
  newUuid(): string;
  /** Next numeric entityId; the caller pre-allocates one per create (see `BatchSurvey.lookups().createCount`). */
  allocateEntityId(): number;
  /** ISO timestamp of the batch: revision createdAt and issue `from`. */
  now: string;
  /** The submitting user, recorded as the user of new content revisions. */
  user: UserInfo;
}

/** The change set of the revision to write, without the ids the writer assigns. */
export type PlannedChanges = Omit<RevisionChanges, 'revisionUuid'>;

export interface PlannedRecord {
  /** The first localId under which the batch touched this entity. */
  localId: string;
  isNew: boolean;
  before?: EntityRecord;
  after: EntityRecord;
  changes: PlannedChanges;
  /** False when only METADATA_OPS applied: the revision keeps its rev and gets a new metadataRev. */
  contentChanged: boolean;
}

export interface BatchPlan {
  /** One per touched entity, in first-touch order. */
  records: PlannedRecord[];
  /** Grouped per localId, in order of first occurrence. */
  issues: EntityIssues[];
  hasErrors: boolean;
  hasWarnings: boolean;
}

/** A record once no later command of the batch can change it, as the rules of the drained phase see it. */
interface FinalRecord {
  localId: string;
  isNew: boolean;
  before?: EntityRecord;
  record: EntityRecord;
}

/** Another entity as the batch leaves it: the state it ends in, and whether a later command may still change that. */
export interface TargetFacts {
  state: EntityState;
  /** False while a later command of the batch may still change the entity. */
  final: boolean;
  /** The localId of an entity the batch creates (asked only for a message). */
  createdAs(): string | undefined;
}

/** What the planner knows of the entities a rule's record refers to. */
export interface PlanFacts {
  /** The entity a reference names, or undefined when it names none. */
  target(ref: EntityRef): TargetFacts | undefined;
}

/** A rule judged when a record is drained; its severity is that of every issue it raises. */
export interface DrainedRule {
  readonly name: string;
  readonly severity: IssueSeverity;
  /**
   * The problems of a final record. A judgement that needs another entity's
   * final state while a later command may still change it goes to `later`,
   * which the planner runs at the end of the batch.
   */
  check(record: FinalRecord, facts: PlanFacts, later: (judge: () => Problem | undefined) => void): readonly Problem[];
}

/** What the end-of-batch rule keeps of a final record, keyed by what the database looks holders up by. */
export interface KeyedEntry {
  key: string;
  localId: string;
  entityId: number;
  /** Its key is looked up among the stored holders (a key that did not change needs no look-up). */
  checked: boolean;
}

/**
 * A rule judged at the end of the batch with facts only the database has:
 * the apply stages each final record's entry in PostgreSQL a group at a
 * time, claims the checked keys, and reads back the entries that share a key
 * with the stored entities in `holderStates` that hold it.
 */
export interface EndRule<Entry extends KeyedEntry> {
  readonly name: string;
  /** The states whose stored entities hold a key; the database's query and its partial index follow this list. */
  readonly holderStates: readonly EntityState[];
  entryOf(record: PlannedRecord): Entry | undefined;
  judge(
    entries: readonly Entry[],
    holders: (key: string) => readonly number[],
    isPlanned: (entityId: number) => boolean,
    newUuid: () => string,
  ): EntityIssues[];
}
