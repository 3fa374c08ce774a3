// OAI-PMH 2.0 responses as text, written in pieces so a list streams: the
// envelope, the verb's element, one header or record at a time, the token.

import { escapeAttribute, escapeText } from '../xml/escape.ts';
import type { OaiError } from './protocol.ts';

const OPENING =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
  'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">';

/** The response's start: responseDate and the request echoed (its arguments only when they were valid). */
export function responseOpening(responseDate: string, baseUrl: string, args: Record<string, string> | undefined): string {
  const attributes = Object.entries(args ?? {})
    .map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`)
    .join('');
  return `${OPENING}<responseDate>${responseDate}</responseDate><request${attributes}>${escapeText(baseUrl)}</request>`;
}

export const RESPONSE_CLOSING = '</OAI-PMH>\n';

export function errorsElement(errors: readonly OaiError[]): string {
  return errors.map((error) => `<error code="${error.code}">${escapeText(error.message)}</error>`).join('');
}

export interface RepositoryDescription {
  repositoryName: string;
  baseUrl: string;
  earliestDatestamp: string;
  adminEmail: string;
}

export function identifyElement(repository: RepositoryDescription): string {
  return (
    `<Identify><repositoryName>${escapeText(repository.repositoryName)}</repositoryName><baseURL>${escapeText(repository.baseUrl)}</baseURL>` +
    `<protocolVersion>2.0</protocolVersion><adminEmail>${escapeText(repository.adminEmail)}</adminEmail>` +
    `<earliestDatestamp>${repository.earliestDatestamp}</earliestDatestamp><deletedRecord>persistent</deletedRecord>` +
    `<granularity>YYYY-MM-DDThh:mm:ssZ</granularity></Identify>`
  );
}

export interface MetadataFormat {
  metadataPrefix: string;
  schema: string;
  metadataNamespace: string;
}

export function metadataFormatsElement(formats: readonly MetadataFormat[]): string {
  const each = formats.map(
    (format) =>
      `<metadataFormat><metadataPrefix>${escapeText(format.metadataPrefix)}</metadataPrefix><schema>${escapeText(format.schema)}</schema>` +
      `<metadataNamespace>${escapeText(format.metadataNamespace)}</metadataNamespace></metadataFormat>`,
  );
  return `<ListMetadataFormats>${each.join('')}</ListMetadataFormats>`;
}

export function setsElement(sets: ReadonlyArray<{ setSpec: string; setName: string }>): string {
  return `<ListSets>${sets.map((set) => `<set><setSpec>${escapeText(set.setSpec)}</setSpec><setName>${escapeText(set.setName)}</setName></set>`).join('')}</ListSets>`;
}

export interface OaiHeader {
  identifier: string;
  datestamp: string;
  setSpec?: string;
  deleted: boolean;
}

export function headerElement(header: OaiHeader): string {
  const status = header.deleted ? ' status="deleted"' : '';
  const set = header.setSpec === undefined ? '' : `<setSpec>${escapeText(header.setSpec)}</setSpec>`;
  return `<header${status}><identifier>${escapeText(header.identifier)}</identifier><datestamp>${header.datestamp}</datestamp>${set}</header>`;
}

/** A record: its header, and its metadata unless it is deleted (the protocol gives a deleted record none). */
export function recordElement(header: OaiHeader, metadata: string | undefined): string {
  return `<record>${headerElement(header)}${header.deleted || metadata === undefined ? '' : `<metadata>${metadata}</metadata>`}</record>`;
}

/**
 * The token element ending a page of an incomplete list: with a token for
 * the next page, or empty on the last page of a list that was split.
 */
export function resumptionTokenElement(token: string | undefined, completeListSize: number | undefined, cursor: number): string {
  const size = completeListSize === undefined ? '' : ` completeListSize="${completeListSize}"`;
  return `<resumptionToken${size} cursor="${cursor}">${token ?? ''}</resumptionToken>`;
}

/** A stored entity document as a metadata element: without its XML declaration. */
export function documentElement(document: string): string {
  if (!document.startsWith('<?xml')) return document;
  const end = document.indexOf('?>');
  return document.slice(end + 2).trimStart();
}
