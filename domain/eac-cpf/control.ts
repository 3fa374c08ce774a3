// The control section of a record's EAC-CPF document: who keeps it, its
// status, its maintenance history as the record knows it (the current
// revision, and the last change of each participant), its sources and its
// other identifiers. The record's state is EAC-CPF's own status: invalid is
// `deleted`, replaced is `deletedReplaced` (the replacement a relation).

import type { EntityRecord, EntityState, UserInfo } from '../model.ts';
import { xmlDateTime } from '../xml/date-time.ts';
import type { Markup } from '../xml/markup.ts';
import { pageIri } from './sections.ts';

type MaintenanceStatus = 'new' | 'revised' | 'deleted' | 'deletedReplaced';

function maintenanceStatus(record: Pick<EntityRecord, 'state' | 'revision'>): MaintenanceStatus {
  if (record.state === 'ERS_INVALID') return 'deleted';
  if (record.state === 'ERS_REPLACED') return 'deletedReplaced';
  return record.revision.prevRev === undefined ? 'new' : 'revised';
}

const PUBLICATION_STATUS: Partial<Record<EntityState, string>> = { ERS_NEW: 'inProcess', ERS_APPROVED: 'approved' };

interface MaintenanceEvent {
  type: 'created' | 'revised' | 'updated';
  user: UserInfo | undefined;
  at: string;
  description: string;
}

/** The service itself, for a revision no user is named on. */
const SERVICE_AGENT = 'Entity Records Service';

function maintenanceEvents(record: EntityRecord): MaintenanceEvent[] {
  const { revision } = record;
  const events: MaintenanceEvent[] = [
    {
      type: revision.prevRev === undefined ? 'created' : 'revised',
      user: revision.user,
      at: revision.createdAt,
      description: `revision ${revision.rev} (metadata ${revision.metadataRev})`,
    },
  ];
  for (const participant of revision.participants) {
    events.push({
      type: participant.role === 'APPROVER' ? 'updated' : 'revised',
      user: participant.user,
      at: participant.lastChange,
      description: participant.role === 'APPROVER' ? 'approver' : 'editor',
    });
  }
  // Oldest first, as a history reads; the sort is stable for equal times.
  return events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

export interface ControlContext {
  origin: string | undefined;
  agencyName: string;
}

export function writeControl(out: Markup, record: EntityRecord, sources: string, context: ControlContext): void {
  out
    .open('control', [
      ['maintenanceStatus', maintenanceStatus(record)],
      ['publicationStatus', PUBLICATION_STATUS[record.state]],
      ['dateEncoding', 'iso8601'],
    ])
    .leaf('recordId', record.entityUuid)
    .open('maintenanceAgency')
    .leaf('agencyName', context.agencyName)
    .close('maintenanceAgency')
    .open('maintenanceHistory');
  for (const event of maintenanceEvents(record)) {
    const at = xmlDateTime(event.at)!;
    out
      .open('maintenanceEvent', [['maintenanceEventType', event.type]])
      .leaf('agent', event.user?.name ?? SERVICE_AGENT, [['agentType', event.user === undefined ? 'machine' : 'human']])
      .leaf('eventDateTime', at, [['standardDateTime', at]])
      .leaf('eventDescription', event.description)
      .close('maintenanceEvent');
  }
  out.close('maintenanceHistory');
  if (sources !== '') out.open('sources').append(sources).close('sources');
  out
    .leaf('otherRecordId', `urn:uuid:${record.entityUuid}`, [['localType', 'entityUuid']])
    .leaf('otherRecordId', record.entityId, [['localType', 'entityId']])
    .leaf('representation', 'text/html', [
      ['href', pageIri(context.origin, { entityId: record.entityId })],
      ['linkTitle', 'record page'],
    ])
    .close('control');
}
