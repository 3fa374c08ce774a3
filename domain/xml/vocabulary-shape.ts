// The shape of a version's vocabulary (vocabulary.ts picks one): its own
// module, so that each version's table names its type without importing the
// module that imports the tables.

import type { RecordChangeOp, XmlVersion } from '../model.ts';

/** Change elements that both versions know; v2 adds the metadata changes. */
export type SharedChangeOp = Exclude<RecordChangeOp, 'addParticipant' | 'addIssue' | 'removeIssue' | 'addIssueStatus'>;

export interface Vocabulary {
  readonly version: XmlVersion;
  readonly namespace: string;
  readonly root: {
    readonly entity: string;
    readonly entities: string;
    readonly revisions: string;
    readonly batch: string;
    readonly success: string;
    readonly failure: string;
    readonly queryResult: string;
    readonly updates: string;
    readonly updatesFrom: string;
  };
  /** Attributes that name an entity (Entity, EntityRecordRef, revision lists). */
  readonly id: { readonly entityId: string; readonly entityUuid: string };
  readonly entity: {
    readonly state: string;
    readonly entityType: string;
    readonly revision: string;
    readonly rev: string;
    readonly createdAt: string;
    /** The written name first; every name is accepted on input. */
    readonly parts: readonly [string, ...string[]];
  };
  readonly part: {
    readonly element: string;
    readonly partUuid: string;
    readonly type: string;
    readonly parent: string;
    readonly items: string;
    readonly extensionItems: string;
  };
  readonly item: {
    readonly type: string;
    readonly spec: string;
    readonly uuid: string;
    readonly binary: string;
    readonly boolean: string;
    readonly entityRef: string;
    readonly enum: string;
    readonly int: string;
    readonly link: string;
    readonly string: string;
    readonly unitDate: string;
    readonly storedTarget: string;
    readonly localTarget: string;
    readonly url: string;
    readonly linkName: string;
    readonly from: string;
    readonly to: string;
    readonly format: string;
    readonly fromEstimate: string;
    readonly toEstimate: string;
    readonly itemRef: string;
  };
  readonly batch: {
    readonly info: string;
    readonly batchUuid: string;
    readonly create: string;
    readonly update: string;
    readonly localId: string;
    readonly entityType: string;
    readonly entityUuid: string;
    readonly storedEntity: string;
    readonly localEntity: string;
    readonly rev: string;
  };
  /** Change element names inside an updateEntity. */
  readonly updateChange: Readonly<Record<SharedChangeOp, string>>;
  /** Change element names inside a revision of the revisions export. */
  readonly revisionChange: Readonly<Record<SharedChangeOp, string>> & { readonly newEntity: string };
  readonly setState: { readonly state: string; readonly storedTarget: string; readonly localTarget: string };
  readonly revisions: { readonly revision: string; readonly revisionUuid: string; readonly batchId: string };
  readonly success: { readonly revision: string; readonly transaction: string; readonly localId: string; readonly rev: string };
  readonly query: {
    readonly header: string;
    readonly count: string;
    readonly list: string;
    readonly entity: string;
    readonly entityType: string;
    readonly name: string;
    readonly description: string;
    readonly lookup: string;
    readonly partType: string;
    readonly value: string;
    readonly highlight: string;
    readonly start: string;
    readonly end: string;
  };
  readonly updates: {
    readonly revInfo: string;
    readonly rev: string;
    readonly info: string;
    readonly from: string;
    readonly to: string;
    readonly count: string;
    readonly updates: string;
  };
}
