// A record as an EAC-CPF 2.0 document (docs/overview.md, "EAC-CPF", holds
// the mapping field by field, and what is lost). One record is one `eac`
// element, written from the record alone, so a stream of them (the snapshot
// export, an OAI-PMH list) holds one record at a time.

import type { EntityRecord } from '../model.ts';
import { preferredNamePart } from '../text.ts';
import { Markup } from '../xml/markup.ts';
import { writeControl, type ControlContext } from './control.ts';
import { writeExistence } from './dates.ts';
import { eacEntityType } from './entity-type.ts';
import { collectSections, writeRelation, type RecordSections } from './sections.ts';

export const EAC_CPF = {
  namespace: 'https://archivists.org/ns/eac/v2',
  schema: 'https://eac.staatsbibliothek-berlin.de/schema/v2/eac.xsd',
  /** No media type is registered for EAC-CPF (docs/decisions/0200). */
  mediaType: 'application/eac-cpf+xml',
} as const;

export interface EacCpfContext extends ControlContext {
  /** Scheme, host and port that record pages (`/global/{id}`) are under; without one, their IRIs are relative. */
  origin: string | undefined;
  /** The maintenance agency: the registry's name. */
  agencyName: string;
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** The `eac` element of a record, carrying its namespace and schema location (an OAI-PMH `metadata` child as it is). */
export function eacCpfWriter(context: EacCpfContext): (record: EntityRecord) => string {
  return (record) => {
    const out = new Markup();
    const preferred = preferredNamePart(record);
    const sections = collectSections(record.parts, preferred, context.origin);
    out.open('eac', [
      ['xmlns', EAC_CPF.namespace],
      ['xmlns:xsi', 'http://www.w3.org/2001/XMLSchema-instance'],
      ['xsi:schemaLocation', `${EAC_CPF.namespace} ${EAC_CPF.schema}`],
    ]);
    writeControl(out, record, sections.sources, context);
    out.open('cpfDescription');
    writeIdentity(out, record, sections);
    writeDescription(out, sections);
    writeRelations(out, record, sections, context.origin);
    return out.close('cpfDescription').close('eac').take();
  };
}

/** One record's EAC-CPF document (a GET with the EAC-CPF media type). */
export function eacCpfDocumentWriter(context: EacCpfContext): (record: EntityRecord) => string {
  const element = eacCpfWriter(context);
  return (record) => XML_DECLARATION + element(record);
}

/**
 * Many records in one file (the snapshot export): EAC-CPF has no element
 * for a set of records, so theirs are the children of an `eacRecords`
 * element of no namespace, each a complete EAC-CPF record
 * (docs/decisions/0202).
 */
export function eacCpfCollection(context: EacCpfContext): { opening: string; element: (record: EntityRecord) => string; closing: string } {
  return { opening: `${XML_DECLARATION}<eacRecords>`, element: eacCpfWriter(context), closing: '</eacRecords>' };
}

function writeIdentity(out: Markup, record: EntityRecord, sections: RecordSections): void {
  out.open('identity').empty('entityType', [['value', eacEntityType(record.entityType)]]);
  // EAC-CPF needs a name; a record without one is named by its number.
  if (sections.names !== '') out.append(sections.names);
  else
    out
      .open('nameEntry', [['status', 'authorized']])
      .leaf('part', record.entityId, [['localType', 'entityId']])
      .close('nameEntry');
  out
    .open('otherEntityTypes')
    .open('otherEntityType')
    .leaf('term', record.entityType)
    .close('otherEntityType')
    .close('otherEntityTypes')
    .append(sections.identityIds)
    .close('identity');
}

function writeDescription(out: Markup, sections: RecordSections): void {
  const hasExistence = sections.creation !== undefined || sections.extinction !== undefined;
  const hasHistory = sections.abstract !== undefined || sections.paragraphs !== '' || sections.chronItems !== '';
  if (sections.localDescriptions === '' && sections.places === '' && !hasExistence && !hasHistory) return;
  out.open('description');
  if (sections.localDescriptions !== '') out.open('localDescriptions').append(sections.localDescriptions).close('localDescriptions');
  if (sections.places !== '') out.open('places').append(sections.places).close('places');
  if (hasExistence) writeExistence(out, sections.creation, sections.extinction);
  if (hasHistory) {
    out.open('biogHist').leaf('abstract', sections.abstract).append(sections.paragraphs);
    if (sections.chronItems !== '') out.open('chronList').append(sections.chronItems).close('chronList');
    out.close('biogHist');
  }
  out.close('description');
}

function writeRelations(out: Markup, record: EntityRecord, sections: RecordSections, origin: string | undefined): void {
  if (sections.relations === '' && record.replacedBy === undefined) return;
  out.open('relations').append(sections.relations);
  if (record.replacedBy !== undefined) writeRelation(out, origin, record.replacedBy, 'replacedBy', undefined, undefined);
  out.close('relations');
}
