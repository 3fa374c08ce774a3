// A record's `eac` element stored beside it (entity.eac_cpf), so that an
// EAC-CPF export copies bytes as the native export does, instead of parsing
// every record's JSON and writing it anew (docs/decisions/0208).
//
// The element depends on two things besides the record: the origin of the
// record pages it links to (the request's) and the agency's name. It is
// stored with a mark where each goes, characters of Unicode's private use
// area, and the export puts the values in. A record whose own text holds one
// of the marks is not stored (its element is written at export time): every
// mark in a stored element is then the writer's.

import type { EntityRecord } from '../model.ts';
import { escapeAttribute, escapeText } from '../xml/escape.ts';
import { eacCpfWriter, type EacCpfContext } from './writer.ts';

const ORIGIN_MARK = '\uE000';
const AGENCY_MARK = '\uE001';

const storedWriter = eacCpfWriter({ origin: ORIGIN_MARK, agencyName: AGENCY_MARK });

/**
 * The record's element with the marks in place of the context; undefined for
 * a record whose JSON text (`json`, as stored) holds a mark.
 */
export function storedEacCpfElement(record: EntityRecord, json: string): string | undefined {
  if (json.includes(ORIGIN_MARK) || json.includes(AGENCY_MARK)) return undefined;
  return storedWriter(record);
}

/** The UTF-8 bytes of each mark, one character a byte (how entity.eac_cpf holds the element). */
const ORIGIN_MARK_BYTES = latin1Bytes(ORIGIN_MARK);
const AGENCY_MARK_BYTES = latin1Bytes(AGENCY_MARK);

/**
 * Puts an export's context into stored elements given as their UTF-8 bytes,
 * one character a byte; what it returns is in the same form.
 */
export function storedEacCpfFiller(context: EacCpfContext): (storedBytes: string) => string {
  const origin = latin1Bytes(escapeAttribute(context.origin ?? ''));
  const agency = latin1Bytes(escapeText(context.agencyName));
  return (storedBytes) => storedBytes.replaceAll(ORIGIN_MARK_BYTES, origin).replaceAll(AGENCY_MARK_BYTES, agency);
}

function latin1Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}
