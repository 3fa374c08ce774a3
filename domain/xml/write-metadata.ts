// v2 metadata: users, participants and issues. Users are always written
// inline (never as userRef), so no document depends on xs:ID bookkeeping.

import type { Issue, IssueStatus, Participant, RecordIssue, UserInfo } from '../model.ts';
import { xmlDateTime } from './date-time.ts';
import type { Markup } from './markup.ts';
import { entityRefAttributes, itemRefAttributes, partRefAttributes } from './write-items.ts';
import { V2, V2_META } from './vocabulary-v2.ts';

export function writeUser(out: Markup, name: string, user: UserInfo): void {
  out.open(name).leaves(user, ['id', 'uuid', 'name', 'entityId', 'institution']).close(name);
}

/** The content of a ParticipantActivity (participant, addParticipant). */
export function writeParticipant(out: Markup, name: string, participant: Participant): void {
  out.open(name).leaf('role', participant.role).leaf('lastChange', xmlDateTime(participant.lastChange));
  writeUser(out, V2_META.user, participant.user);
  out.close(name);
}

/** IssueStatus, or AddIssueStatus when issueUuid is given. */
export function writeIssueStatus(out: Markup, name: string, status: IssueStatus, issueUuid?: string): void {
  out.open(name).leaf('resolution', status.resolution);
  writeUser(out, V2_META.user, status.user);
  out.leaf('updated', xmlDateTime(status.updated)).leaf('note', status.note).leaf('issueUuid', issueUuid).close(name);
}

/** What an ExistingIssue adds to an Issue. */
export type IssueHistory = Partial<Pick<RecordIssue, 'status' | 'fromRev'>> & { from: string };

/** Issue, or ExistingIssue when its history is given. */
export function writeIssue(out: Markup, name: string, issue: Issue, history?: IssueHistory): void {
  out.open(name).leaves(issue, ['uuid', 'severity', 'ruleCode', 'issueCode', 'message', 'source', 'detail']);
  if (issue.partRef !== undefined) out.empty('partRef', partRefAttributes(issue.partRef, V2));
  if (issue.itemRef !== undefined) out.empty('itemRef', itemRefAttributes(issue.itemRef, V2));
  if (issue.entityRef !== undefined) out.empty('entityRef', entityRefAttributes(issue.entityRef, V2));
  if (history !== undefined) {
    out.leaf('from', xmlDateTime(history.from));
    if (history.status !== undefined) writeIssueStatus(out, 'status', history.status);
    out.leaf('fromRev', history.fromRev);
  }
  out.close(name);
}
