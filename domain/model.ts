// The record model shared by every layer. Version-neutral: the v2 and v1 XML
// formats are two spellings of these types (domain/xml). Plain data only, so
// values can be stored as JSON, passed to activities and compared in tests.

export const ENTITY_STATES = ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'] as const;
export type EntityState = (typeof ENTITY_STATES)[number];

export const PART_TYPES = ['PT_BODY', 'PT_CRE', 'PT_EVENT', 'PT_EXT', 'PT_IDENT', 'PT_NAME', 'PT_REL'] as const;
export type PartType = (typeof PART_TYPES)[number];

export const PARTICIPANT_ROLES = ['EDITOR', 'APPROVER'] as const;
export type ParticipantRole = (typeof PARTICIPANT_ROLES)[number];

export const ISSUE_SEVERITIES = ['ERROR', 'WARNING'] as const;
export type IssueSeverity = (typeof ISSUE_SEVERITIES)[number];

export const ISSUE_RESOLUTIONS = ['IR_ALL_REVISIONS_OK', 'IR_FIX_NEEDED', 'IR_REVISION_OK'] as const;
type IssueResolution = (typeof ISSUE_RESOLUTIONS)[number];

/** A reference to a stored entity: by number, by UUID, or both. */
export interface EntityRef {
  entityId?: number;
  entityUuid?: string;
}

/** Where an entity-valued item or a replacement points: a stored entity or a create of the same batch. */
export type EntityTarget = { kind: 'stored'; ref: EntityRef } | { kind: 'local'; localId: string };

export interface UserInfo {
  id: string;
  name: string;
  uuid?: string;
  entityId?: number;
  institution?: string;
}

interface ItemAttributes {
  type: string;
  spec?: string;
  uuid?: string;
}

export type Item = ItemAttributes &
  (
    | { kind: 'string'; value: string }
    | { kind: 'enum' }
    /** xs:integer is unbounded, so the decimal text is kept as written. */
    | { kind: 'int'; value: string }
    | { kind: 'boolean'; value: boolean }
    | { kind: 'unitDate'; from: string; to: string; format?: string; fromEstimate?: boolean; toEstimate?: boolean }
    | { kind: 'link'; url: string; name?: string }
    | { kind: 'entityRef'; target: EntityTarget }
    | { kind: 'binary'; base64: string }
  );
export type ItemKind = Item['kind'];
export const ITEM_KINDS: readonly ItemKind[] = ['string', 'enum', 'int', 'boolean', 'unitDate', 'link', 'entityRef', 'binary'];

/** Identifies an item inside a part: by uuid when it has one, else by type and spec. */
export interface ItemRef {
  type: string;
  spec?: string;
  uuid?: string;
}

export interface PartRef {
  type: PartType;
  partUuid?: string;
}

export interface Part {
  partUuid: string;
  type: PartType;
  parent?: string;
  items: Item[];
  /** Extension items (`eits` in the public schema). */
  extensionItems?: Item[];
}

export interface IssueStatus {
  resolution: IssueResolution;
  user: UserInfo;
  updated: string;
  note?: string;
}

export interface Issue {
  uuid: string;
  severity: IssueSeverity;
  ruleCode?: string;
  issueCode?: string;
  message: string;
  source?: string;
  detail?: string;
  partRef?: PartRef;
  itemRef?: ItemRef;
  entityRef?: EntityRef;
}

/** An issue attached to a stored record. */
export interface RecordIssue extends Issue {
  from: string;
  status?: IssueStatus;
  fromRev?: string;
}

export interface Participant {
  role: ParticipantRole;
  lastChange: string;
  user: UserInfo;
}

export interface RevisionInfo {
  rev: string;
  metadataRev: string;
  prevRev?: string;
  user?: UserInfo;
  createdAt: string;
  participants: Participant[];
}

export interface EntityRecord {
  entityId: number;
  entityUuid: string;
  entityType: string;
  state: EntityState;
  replacedBy?: EntityRef;
  revision: RevisionInfo;
  /** partUuid of the preferred PT_NAME part; absent means the first PT_NAME part. */
  preferredNamePart?: string;
  parts: Part[];
  issues: RecordIssue[];
}

// ---- Batch change commands (what a batch asks for) ----

/** How an update names its entity: a stored entity (with the rev the sender last saw) or a create of this batch. */
export type BatchEntityRef =
  | { kind: 'stored'; localId: string; entityId?: number; entityUuid?: string; rev: string; metadataRev?: string }
  | { kind: 'local'; localId: string };

export type RecordChange =
  | { op: 'newPart'; part: Part }
  | { op: 'newItems'; part: PartRef; items: Item[] }
  | { op: 'updateItems'; part: PartRef; items: Item[] }
  | { op: 'deletePart'; part: PartRef }
  | { op: 'deleteItems'; part: PartRef; items: ItemRef[] }
  | { op: 'setEntityType'; entityType: string }
  | { op: 'setPreferredName'; partUuid: string }
  | { op: 'setState'; state: EntityState; replacement?: EntityTarget }
  | { op: 'addParticipant'; participant: Participant }
  | { op: 'addIssue'; issue: Issue }
  | { op: 'removeIssue'; issueUuid: string }
  | { op: 'addIssueStatus'; issueUuid: string; status: IssueStatus };
export type RecordChangeOp = RecordChange['op'];

/** Changes that touch only metadata: they create a new metadataRev, not a new rev. */
export const METADATA_OPS: ReadonlySet<RecordChangeOp> = new Set(['addParticipant', 'addIssue', 'removeIssue', 'addIssueStatus']);

export interface CreateEntityCommand {
  kind: 'create';
  localId: string;
  entityType: string;
  entityUuid?: string;
  parts: Part[];
}

export interface UpdateEntityCommand {
  kind: 'update';
  entity: BatchEntityRef;
  changes: RecordChange[];
}

export type ChangeCommand = CreateEntityCommand | UpdateEntityCommand;

export type XmlVersion = 'v2' | 'v1';

export interface BatchHeader {
  version: XmlVersion;
  batchUuid?: string;
  sender: UserInfo;
}

// ---- Batch outcome (what a batch answers) ----

export interface BatchRevisionResult {
  localId: string;
  entityId: number;
  entityUuid: string;
  rev: string;
  metadataRev: string;
}

export interface BatchSuccess {
  outcome: 'success';
  transactionUuid: string;
  revisions: BatchRevisionResult[];
}

export interface EntityIssues {
  localId?: string;
  issues: Issue[];
}

export interface BatchFailure {
  outcome: 'failure';
  entities: EntityIssues[];
  forceKey?: string;
  /** When the batch was checked; the v2 failure document gives it as each issue's `from`. */
  checkedAt?: string;
}

export type BatchResult = BatchSuccess | BatchFailure;

// ---- Reads ----

export interface RevisionChanges {
  revisionUuid: string;
  batchId?: string;
  entityId: number;
  entityUuid: string;
  /** The first revision of an entity starts with its creation. */
  created?: { entityType: string; parts: Part[] };
  changes: RecordChange[];
}

export interface HighlightPosition {
  start: number;
  end: number;
}

export interface FoundEntity {
  entityId: number;
  entityUuid: string;
  entityType: string;
  name: string;
  description?: string;
  lookup?: { value: string; partType?: PartType; highlights: HighlightPosition[] };
}

export interface QueryResult {
  count: number;
  entities: FoundEntity[];
}

export interface RevisionPointer {
  entityId: number;
  entityUuid: string;
  rev: string;
  metadataRev?: string;
}

export interface UpdatesFromInfo {
  from: string;
  to: string;
  count: number;
}

/** Codes of the issues a batch can raise; stable, clients match on them. */
export const BATCH_ISSUE_CODES = {
  unknownEntity: 'UnknownEntity',
  staleRevision: 'StaleRevision',
  duplicateEntityUuid: 'DuplicateEntityUuid',
  unknownPart: 'UnknownPart',
  unknownItem: 'UnknownItem',
  unknownLocalReference: 'UnknownLocalReference',
  invalidStateChange: 'InvalidStateChange',
  missingNamePart: 'MissingNamePart',
  unknownIssue: 'UnknownIssue',
  preferredNameExists: 'PreferredNameExists',
  referenceToInactiveEntity: 'ReferenceToInactiveEntity',
  invalidForceKey: 'InvalidForceKey',
  /** A part, item or issue UUID, or a batch localId, that is already taken. */
  duplicateIdentifier: 'DuplicateIdentifier',
} as const;
export type BatchIssueCode = (typeof BATCH_ISSUE_CODES)[keyof typeof BATCH_ISSUE_CODES];
