// Change elements, shared by batches (updateEntity) and the revisions export.

import type { RecordChange, XmlVersion } from '../model.ts';
import { METADATA_OPS } from '../model.ts';
import type { Markup } from './markup.ts';
import type { SharedChangeOp, Vocabulary } from './vocabulary.ts';
import { V2_META } from './vocabulary-v2.ts';
import { itemRefAttributes, partRefAttributes, writeItemList, writePart, writeTarget } from './write-items.ts';
import { writeIssue, writeIssueStatus, writeParticipant } from './write-metadata.ts';

/** v1 knows no participants or issues; those changes are left out of v1 documents. */
export function isExpressible(change: RecordChange, version: XmlVersion): boolean {
  return version === 'v2' || !METADATA_OPS.has(change.op);
}

/**
 * The public RevChanges group has no issue changes (v2 keeps participants;
 * v1 no metadata at all). Exports leave them out so that they stay valid for
 * every client of the public schema; issues are read from the record itself.
 */
const ISSUE_OPS: ReadonlySet<RecordChange['op']> = new Set(['addIssue', 'removeIssue', 'addIssueStatus']);

export function isExpressibleInRevision(change: RecordChange, version: XmlVersion): boolean {
  return isExpressible(change, version) && !ISSUE_OPS.has(change.op);
}

export function writeChange(out: Markup, change: RecordChange, vocab: Vocabulary, names: Readonly<Record<SharedChangeOp, string>>): void {
  switch (change.op) {
    case 'newPart':
      writePart(out, change.part, names.newPart, vocab);
      return;
    case 'newItems':
    case 'updateItems':
      writeItemList(out, names[change.op], partRefAttributes(change.part, vocab), change.items, vocab, 'empty');
      return;
    case 'deletePart':
      out.empty(names.deletePart, partRefAttributes(change.part, vocab));
      return;
    case 'deleteItems':
      out.open(names.deleteItems, partRefAttributes(change.part, vocab));
      for (const item of change.items) out.empty(vocab.item.itemRef, itemRefAttributes(item, vocab));
      out.close(names.deleteItems);
      return;
    case 'setEntityType':
      out.leaf(names.setEntityType, change.entityType);
      return;
    case 'setPreferredName':
      out.leaf(names.setPreferredName, change.partUuid);
      return;
    case 'setState': {
      const state = vocab.setState;
      out.open(names.setState).leaf(state.state, change.state);
      if (change.replacement !== undefined) writeTarget(out, change.replacement, state.storedTarget, state.localTarget, vocab);
      out.close(names.setState);
      return;
    }
    case 'addParticipant':
      if (vocab.version === 'v2') writeParticipant(out, V2_META.addParticipant, change.participant);
      return;
    case 'addIssue':
      if (vocab.version === 'v2') writeIssue(out, V2_META.addIssue, change.issue);
      return;
    case 'removeIssue':
      if (vocab.version === 'v2') out.leaf(V2_META.removeIssue, change.issueUuid);
      return;
    case 'addIssueStatus':
      if (vocab.version === 'v2') writeIssueStatus(out, V2_META.addIssueStatus, change.status, change.issueUuid);
      return;
  }
}
