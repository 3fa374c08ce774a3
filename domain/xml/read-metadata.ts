// v2 metadata: users (inline or by userRef), participants and issues.

import type { Issue, IssueStatus, Participant, RecordIssue, UserInfo } from '../model.ts';
import { ISSUE_RESOLUTIONS, ISSUE_SEVERITIES, PARTICIPANT_ROLES } from '../model.ts';
import type { XmlElement } from './element-stream.ts';
import { readItemRef, readPartRef } from './read-items.ts';
import {
  attribute,
  invalid,
  optional,
  parseEnum,
  parseLong,
  readEntityRef,
  text,
  token,
  unexpected,
  withoutChildren,
  type ReadContext,
} from './read-support.ts';
import { V2_META } from './vocabulary-v2.ts';

/** A UserInfo element; one with localId can be named by later userRef elements. */
export function readUser(element: XmlElement, context: ReadContext): UserInfo {
  let id: string | undefined;
  let name: string | undefined;
  let uuid: string | undefined;
  let entityId: number | undefined;
  let institution: string | undefined;
  for (const child of element.children) {
    switch (child.name) {
      case 'id':
        id = token(child);
        break;
      case 'name':
        name = text(child);
        break;
      case 'uuid':
        uuid = token(child);
        break;
      case 'entityId':
        entityId = parseLong(child, text(child), 'entityId');
        break;
      case 'institution':
        institution = token(child);
        break;
      default:
        throw unexpected(child, element);
    }
  }
  if (id === undefined || name === undefined) throw invalid(element, `${element.name} needs id and name`);
  const user: UserInfo = {
    id,
    name,
    ...optional('uuid', uuid),
    ...optional('entityId', entityId),
    ...optional('institution', institution),
  };
  const localId = attribute(element, 'localId');
  if (localId !== undefined) context.users.set(localId, user);
  return user;
}

/** The ExternalUser choice: a user element or a userRef to an earlier one. */
export function readExternalUser(element: XmlElement, context: ReadContext): UserInfo | undefined {
  if (element.name === V2_META.user) return readUser(element, context);
  if (element.name !== V2_META.userRef) return undefined;
  const user = context.users.get(token(element));
  if (user === undefined) throw invalid(element, `userRef ${token(element)} does not name an earlier user`);
  return user;
}

export function readParticipant(element: XmlElement, context: ReadContext): Participant {
  let role: Participant['role'] | undefined;
  let lastChange: string | undefined;
  let user: UserInfo | undefined;
  for (const child of element.children) {
    if (child.name === 'role') role = parseEnum(child, text(child), PARTICIPANT_ROLES, 'participant role');
    else if (child.name === 'lastChange') lastChange = token(child);
    else user = readExternalUser(child, context) ?? throwUnexpected(child, element);
  }
  if (role === undefined || lastChange === undefined || user === undefined) {
    throw invalid(element, `${element.name} needs role, lastChange and a user`);
  }
  return { role, lastChange, user };
}

/** IssueStatus; within addIssueStatus it also carries issueUuid. */
export function readIssueStatus(element: XmlElement, context: ReadContext): { status: IssueStatus; issueUuid?: string } {
  let resolution: IssueStatus['resolution'] | undefined;
  let user: UserInfo | undefined;
  let updated: string | undefined;
  let note: string | undefined;
  let issueUuid: string | undefined;
  for (const child of element.children) {
    if (child.name === 'resolution') resolution = parseEnum(child, text(child), ISSUE_RESOLUTIONS, 'issue resolution');
    else if (child.name === 'updated') updated = token(child);
    else if (child.name === 'note') note = text(child);
    else if (child.name === 'issueUuid') issueUuid = token(child);
    else user = readExternalUser(child, context) ?? throwUnexpected(child, element);
  }
  if (resolution === undefined || user === undefined || updated === undefined) {
    throw invalid(element, `${element.name} needs resolution, a user and updated`);
  }
  return { status: { resolution, user, updated, ...optional('note', note) }, ...optional('issueUuid', issueUuid) };
}

/** Issue or ExistingIssue: the latter adds from, status and fromRev. */
export function readIssue(element: XmlElement, context: ReadContext): Issue | RecordIssue {
  const vocab = context.vocab;
  const fields: Partial<RecordIssue> = {};
  for (const child of element.children) {
    switch (child.name) {
      case 'uuid':
      case 'ruleCode':
      case 'issueCode':
      case 'from':
      case 'fromRev':
        fields[child.name] = token(child);
        break;
      case 'message':
      case 'source':
      case 'detail':
        fields[child.name] = text(child);
        break;
      case 'severity':
        fields.severity = parseEnum(child, text(child), ISSUE_SEVERITIES, 'issue severity');
        break;
      case 'partRef':
        fields.partRef = readPartRef(withoutChildren(child), vocab);
        break;
      case 'itemRef':
        fields.itemRef = readItemRef(withoutChildren(child), vocab);
        break;
      case 'entityRef':
        fields.entityRef = readEntityRef(child, vocab);
        break;
      case 'status':
        fields.status = readIssueStatus(child, context).status;
        break;
      default:
        throw unexpected(child, element);
    }
  }
  const { uuid, severity, message } = fields;
  if (uuid === undefined || severity === undefined || message === undefined) {
    throw invalid(element, `${element.name} needs uuid, severity and message`);
  }
  return {
    uuid,
    severity,
    ...optional('ruleCode', fields.ruleCode),
    ...optional('issueCode', fields.issueCode),
    message,
    ...optional('source', fields.source),
    ...optional('detail', fields.detail),
    ...optional('partRef', fields.partRef),
    ...optional('itemRef', fields.itemRef),
    ...optional('entityRef', fields.entityRef),
    ...optional('from', fields.from),
    ...optional('status', fields.status),
    ...optional('fromRev', fields.fromRev),
  };
}

function throwUnexpected(child: XmlElement, parent: XmlElement): never {
  throw unexpected(child, parent);
}
