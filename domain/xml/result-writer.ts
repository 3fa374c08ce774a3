// Batch results: batchChangeSuccess / batchChangeFailure in v2, bus / bue in v1.

import type { BatchFailure, BatchResult, BatchSuccess, Issue, XmlVersion } from '../model.ts';
import { BATCH_ISSUE_CODES } from '../model.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V1_ONLY } from './vocabulary-v1.ts';
import { V2_META } from './vocabulary-v2.ts';
import { revisionRefAttributes } from './write-items.ts';
import { writeIssue } from './write-metadata.ts';

const V1_ERROR_TYPES = ['ET_DUPLICATED_UUID', 'ET_ERROR', 'ET_OTHER_REV', 'ET_PREF_NAME_EXIST'] as const;
export type V1ErrorType = (typeof V1_ERROR_TYPES)[number];

const V1_ERROR_TYPE_BY_CODE: ReadonlyMap<string, V1ErrorType> = new Map<string, V1ErrorType>([
  [BATCH_ISSUE_CODES.duplicateEntityUuid, 'ET_DUPLICATED_UUID'],
  [BATCH_ISSUE_CODES.staleRevision, 'ET_OTHER_REV'],
  [BATCH_ISSUE_CODES.preferredNameExists, 'ET_PREF_NAME_EXIST'],
  // The public v2 format carries the legacy values in issueCode too.
  ...V1_ERROR_TYPES.map((type) => [type, type] as const),
]);

/** The v1 ErrorType of an issue code; everything without a v1 counterpart is ET_ERROR. */
export function v1ErrorType(issueCode: string | undefined): V1ErrorType {
  return (issueCode === undefined ? undefined : V1_ERROR_TYPE_BY_CODE.get(issueCode)) ?? 'ET_ERROR';
}

export function serializeBatchResult(result: BatchResult, version: XmlVersion): string {
  const vocab = vocabularyFor(version);
  return result.outcome === 'success' ? successDocument(result, vocab) : failureDocument(result, vocab);
}

function successDocument(result: BatchSuccess, vocab: Vocabulary): string {
  const names = vocab.success;
  const out = new Markup().openDocument(vocab.root.success, vocab, [[names.transaction, result.transactionUuid]]);
  for (const revision of result.revisions) out.empty(names.revision, revisionRefAttributes(revision, names, vocab));
  return out.close(vocab.root.success).take();
}

/**
 * Issues grouped by localId in first-seen order: localId is an xs:ID in both
 * formats, so each value may appear on one element only.
 */
function issuesByEntity(result: BatchFailure): Array<[string | undefined, Issue[]]> {
  const groups = new Map<string | undefined, Issue[]>();
  for (const entity of result.entities) {
    if (entity.issues.length === 0) continue;
    const group = groups.get(entity.localId);
    if (group === undefined) groups.set(entity.localId, [...entity.issues]);
    else group.push(...entity.issues);
  }
  return [...groups];
}

function failureDocument(result: BatchFailure, vocab: Vocabulary): string {
  const out = new Markup().openDocument(vocab.root.failure, vocab);
  const groups = issuesByEntity(result);
  if (vocab.version === 'v2') {
    const history = result.checkedAt === undefined ? undefined : { from: result.checkedAt };
    for (const [localId, issues] of groups) {
      out.open(V2_META.issues, [['localId', localId]]);
      for (const issue of issues) writeIssue(out, V2_META.issue, issue, history);
      out.close(V2_META.issues);
    }
    out.leaf(V2_META.forceKey, result.forceKey);
  } else {
    // One flat message per problem; severity and forceKey have no v1 form.
    // The entity's lid goes on its first message only (xs:ID); the others follow it.
    for (const [localId, issues] of groups) {
      issues.forEach((issue, index) => {
        out
          .open(V1_ONLY.errorMessage, [[V1_ONLY.localId, index === 0 ? localId : undefined]])
          .leaf(V1_ONLY.errorType, v1ErrorType(issue.issueCode))
          .leaf(V1_ONLY.message, issue.message)
          .close(V1_ONLY.errorMessage);
      });
    }
  }
  return out.close(vocab.root.failure).take();
}
