import type { EntityIssues, EntityRecord, EntityRef, EntityState, RevisionChanges, UserInfo } from '../model.ts';

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
