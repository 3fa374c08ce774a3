// OAI-PMH 2.0 over the registry: each verb's response, streamed. Protocol
// errors are part of a response (HTTP 200), as the protocol says.

import type { HarvestContent, HarvestedRecord, HarvestFilter, HarvestPoint } from '../../db/oai.ts';
import { eacCpfWriter } from '../../domain/eac-cpf/writer.ts';
import type { EntityRecord } from '../../domain/model.ts';
import { dublinCore } from '../../domain/oai/dublin-core.ts';
import { METADATA_FORMATS } from '../../domain/oai/formats.ts';
import {
  entityUuidOf,
  hasSet,
  oaiIdentifier,
  setOfEntityType,
  TYPE_SETS,
  type MetadataPrefix,
  type OaiError,
  type OaiRequest,
  type ParsedRequest,
} from '../../domain/oai/protocol.ts';
import {
  documentElement,
  errorsElement,
  headerElement,
  identifyElement,
  metadataFormatsElement,
  recordElement,
  RESPONSE_CLOSING,
  responseOpening,
  resumptionTokenElement,
  setsElement,
  type OaiHeader,
} from '../../domain/oai/response-writer.ts';
import type { HarvestQuery, ResumptionToken, TokenCodec, WalkPosition } from '../../domain/oai/token.ts';
import { serializeEntity } from '../../domain/xml/index.ts';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';

/** Where the repository is reached (the base URL of /oai and of the served schemas), and how its tokens are signed. */
export interface OaiEndpoint {
  /** The public URL of /oai. */
  baseUrl: string;
  /** The URL the service's XSDs are served under (/docs/schemas/). */
  schemasUrl: string;
  /** The service's public URL, under which EAC-CPF records link record pages (/global/{id}). */
  publicUrl: string;
  tokens: TokenCodec;
}

/** How long a response waits for a commit in progress before answering 503 (the commit-order lock is held for a commit only). */
const COMMIT_LOCK_WAIT_MS = 5000;

/**
 * The answer to a request: its XML, chunk by chunk (UTF-8). The commit point
 * is taken before the answer begins, so a 503 (ServiceUnavailable, a commit
 * holding the commit-order lock too long) is still an HTTP answer.
 */
export async function oaiResponse(
  deps: Pick<ServiceDeps, 'db' | 'config'>,
  parsed: ParsedRequest,
  endpoint: OaiEndpoint,
): Promise<AsyncGenerator<Buffer>> {
  const point = await deps.db.oai.harvestPoint(COMMIT_LOCK_WAIT_MS, countAsked(parsed));
  if (point === undefined) throw new ServiceError('ServiceUnavailable', 'a commit is taking long: retry shortly');
  return respond(deps, parsed, endpoint, point);
}

/** A list's first page without from/until takes its size from the kept counts, in the commit point's own snapshot. */
function countAsked(parsed: ParsedRequest): { entityType?: string } | undefined {
  if (!parsed.ok || (parsed.request.verb !== 'ListIdentifiers' && parsed.request.verb !== 'ListRecords')) return undefined;
  const { query, token } = parsed.request;
  if (token !== undefined || query.from !== undefined || query.until !== undefined) return undefined;
  return query.entityType === undefined ? {} : { entityType: query.entityType };
}

async function* respond(
  deps: Pick<ServiceDeps, 'db' | 'config'>,
  parsed: ParsedRequest,
  endpoint: OaiEndpoint,
  point: HarvestPoint,
): AsyncGenerator<Buffer> {
  const opening = (args: Record<string, string> | undefined) => responseOpening(point.responseDate, endpoint.baseUrl, args);
  if (!parsed.ok) {
    yield utf8(opening(parsed.arguments) + errorsElement([parsed.error]) + RESPONSE_CLOSING);
    return;
  }
  const { request } = parsed;
  const error = (oaiError: OaiError) => utf8(opening(parsed.arguments) + errorsElement([oaiError]) + RESPONSE_CLOSING);
  switch (request.verb) {
    case 'Identify': {
      const earliest = await deps.db.oai.earliestDatestamp();
      const description = {
        repositoryName: deps.config.OAI_REPOSITORY_NAME,
        baseUrl: endpoint.baseUrl,
        adminEmail: deps.config.oaiAdminEmail,
        earliestDatestamp: earliest ?? point.responseDate,
      };
      yield utf8(opening(parsed.arguments) + identifyElement(description) + RESPONSE_CLOSING);
      return;
    }
    case 'ListMetadataFormats': {
      if (request.identifier !== undefined && (await recordNamed(deps, request.identifier, 'none')) === undefined) {
        yield error(noSuchRecord(request.identifier));
        return;
      }
      const formats = METADATA_FORMATS.map((format) => ({
        metadataPrefix: format.metadataPrefix,
        schema: format.schema(endpoint.schemasUrl),
        metadataNamespace: format.metadataNamespace,
      }));
      yield utf8(opening(parsed.arguments) + metadataFormatsElement(formats) + RESPONSE_CLOSING);
      return;
    }
    case 'ListSets': {
      // The parent set first: never an empty list (OAI-PMH.xsd needs a set), even before the first record.
      const sets = [
        { setSpec: TYPE_SETS, setName: 'Records by entity type' },
        ...(await deps.db.oai.entityTypes())
          .filter(hasSet)
          .map((entityType) => ({ setSpec: setOfEntityType(entityType), setName: `Entity type ${entityType}` })),
      ];
      yield utf8(opening(parsed.arguments) + setsElement(sets) + RESPONSE_CLOSING);
      return;
    }
    case 'GetRecord': {
      const found = await recordNamed(deps, request.identifier, contentOf(request.metadataPrefix));
      if (found === undefined) {
        yield error(noSuchRecord(request.identifier));
        return;
      }
      yield utf8(opening(parsed.arguments) + '<GetRecord>');
      yield recordBytes(deps.config.oaiRepositoryId, found, request.metadataPrefix, eacCpfOf(deps, endpoint));
      yield utf8('</GetRecord>' + RESPONSE_CLOSING);
      return;
    }
    case 'ListIdentifiers':
    case 'ListRecords':
      yield* listResponse(deps, request, point, endpoint, opening(parsed.arguments), error);
  }
}

async function* listResponse(
  deps: Pick<ServiceDeps, 'db' | 'config'>,
  request: Extract<OaiRequest, { verb: 'ListIdentifiers' | 'ListRecords' }>,
  point: HarvestPoint,
  endpoint: OaiEndpoint,
  opening: string,
  error: (oaiError: OaiError) => Buffer,
): AsyncGenerator<Buffer> {
  const { tokens } = endpoint;
  const eacCpf = eacCpfOf(deps, endpoint);
  const { query, token } = request;
  // A token's commit point is one this repository reached; a later one (an unsigned format-1 token altered) would move.
  if (token !== undefined && BigInt(token.commitSeq) > BigInt(point.commitSeq)) {
    yield error({ code: 'badResumptionToken', message: 'the resumptionToken names a commit point this repository has not reached' });
    return;
  }
  const start = token ?? (await firstPage(deps, query, point));
  if (start === undefined) {
    yield error({ code: 'noRecordsMatch', message: 'no record matches these arguments' });
    return;
  }
  const { commitSeq, position, completeListSize, cursor } = start;
  const pageSize = deps.config.OAI_PAGE_SIZE;
  const headersOnly = request.verb === 'ListIdentifiers';
  const content: HarvestContent = headersOnly ? 'none' : contentOf(query.metadataPrefix);
  // One more than a page: whether a next page exists is known without counting.
  // Pinned to a commit point: any standby that has replayed it serves the page.
  const oai = (await deps.db.reads.side({ commitSeq })).oai;
  const pages =
    position.kind === 'entity'
      ? oai.records(filterOf(query), commitSeq, position.after, pageSize + 1, content)
      : oai.windowRecords(
          filterOf(query),
          commitSeq,
          { window: position, afterSeq: position.afterSeq, afterEntity: position.afterEntity },
          pageSize + 1,
          content,
        );
  let served = 0;
  let last: HarvestedRecord | undefined;
  let more = false;
  try {
    for await (const rows of pages) {
      const chunks: Buffer[] = [];
      if (served === 0) chunks.push(utf8(`${opening}<${request.verb}>`));
      for (const row of rows) {
        if (served === pageSize) {
          more = true;
          break;
        }
        chunks.push(
          headersOnly
            ? utf8(headerElement(headerOf(deps.config.oaiRepositoryId, row)))
            : recordBytes(deps.config.oaiRepositoryId, row, query.metadataPrefix, eacCpf),
        );
        served += 1;
        last = row;
      }
      yield chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    }
  } finally {
    await pages.return(undefined);
  }
  if (served === 0) {
    yield error(
      token === undefined
        ? { code: 'noRecordsMatch', message: 'no record matches these arguments' }
        : { code: 'badResumptionToken', message: 'the list this token continues has no records left' },
    );
    return;
  }
  let next: string | undefined;
  if (more) {
    const nextToken: ResumptionToken = { verb: request.verb, query, commitSeq, position: after(position, last!), cursor: cursor + served };
    if (completeListSize !== undefined) nextToken.completeListSize = completeListSize;
    next = tokens.encode(nextToken);
  }
  // A list in one page needs no token; a split one ends on an empty token.
  const tokenElement = more || token !== undefined ? resumptionTokenElement(next, completeListSize, cursor) : '';
  yield utf8(`${tokenElement}</${request.verb}>${RESPONSE_CLOSING}`);
}

/** Where a list's first page starts; undefined when an index probe already shows nothing matches. */
async function firstPage(
  deps: Pick<ServiceDeps, 'db'>,
  query: HarvestQuery,
  point: HarvestPoint,
): Promise<Omit<ResumptionToken, 'verb' | 'query'> | undefined> {
  const { commitSeq } = point;
  if (query.from === undefined && query.until === undefined) {
    // Counted from the kept counts in the point's snapshot (oaiResponse asked for them): exact, and nothing walked.
    if (point.records === 0) return undefined;
    const start: Omit<ResumptionToken, 'verb' | 'query'> = { commitSeq, position: { kind: 'entity', after: '0' }, cursor: 0 };
    if (point.records !== undefined) start.completeListSize = point.records;
    return start;
  }
  // A window's size would be a count of its revisions: left out (the protocol makes it optional).
  const window = await (await deps.db.reads.side({ commitSeq })).oai.commitWindow(filterOf(query), commitSeq);
  if (window === undefined) return undefined;
  const { firstCommit, lastCommit, firstSeq, lastSeq } = window;
  return {
    commitSeq,
    position: { kind: 'window', firstCommit, lastCommit, afterSeq: String(BigInt(firstSeq) - 1n), afterEntity: '0', lastSeq },
    cursor: 0,
  };
}

/** The position after the last record a page served. */
function after(position: WalkPosition, last: HarvestedRecord): WalkPosition {
  return position.kind === 'entity'
    ? { kind: 'entity', after: last.entityId }
    : { ...position, afterSeq: last.seq, afterEntity: last.entityId };
}

function filterOf(query: HarvestQuery): HarvestFilter {
  const filter: HarvestFilter = {};
  if (query.entityType !== undefined) filter.entityType = query.entityType;
  if (query.from !== undefined) filter.from = query.from;
  if (query.until !== undefined) filter.until = query.until;
  return filter;
}

/** What a format's records are written from: the stored native document, or the record. */
const CONTENT: Record<MetadataPrefix, HarvestContent> = { oai_dc: 'record', 'cam-2025': 'document', 'eac-cpf': 'record' };

function contentOf(prefix: MetadataPrefix): HarvestContent {
  return CONTENT[prefix];
}

async function recordNamed(
  deps: Pick<ServiceDeps, 'db' | 'config'>,
  identifier: string,
  content: HarvestContent,
): Promise<HarvestedRecord | undefined> {
  const uuid = entityUuidOf(deps.config.oaiRepositoryId, identifier);
  return uuid === undefined ? undefined : deps.db.reads.side({ fresh: true }).then((side) => side.oai.currentRecord(uuid, content));
}

function noSuchRecord(identifier: string): OaiError {
  return { code: 'idDoesNotExist', message: `${JSON.stringify(identifier)} names no record of this repository` };
}

function headerOf(repositoryId: string, row: HarvestedRecord): OaiHeader {
  const header: OaiHeader = { identifier: oaiIdentifier(repositoryId, row.entityUuid), datestamp: row.datestamp, deleted: row.deleted };
  if (hasSet(row.entityType)) header.setSpec = setOfEntityType(row.entityType);
  return header;
}

/** A record element: the native format from the stored document where there is one (its bytes as stored), else written from the record. */
function recordBytes(repositoryId: string, row: HarvestedRecord, prefix: MetadataPrefix, eacCpf: (record: EntityRecord) => string): Buffer {
  const header = headerOf(repositoryId, row);
  // Invalid and replaced records are OAI deleted headers: EAC-CPF's own deleted statuses never reach a harvester.
  if (row.deleted) return utf8(recordElement(header, undefined));
  if (prefix === 'oai_dc') return utf8(recordElement(header, dublinCore(row.record!)));
  if (prefix === 'eac-cpf') return utf8(recordElement(header, eacCpf(row.record!)));
  if (row.documentBytes !== undefined) {
    const [before, after] = recordElement(header, '\u0000').split('\u0000') as [string, string];
    return Buffer.concat([utf8(before), Buffer.from(documentElement(row.documentBytes), 'latin1'), utf8(after)]);
  }
  return utf8(recordElement(header, documentElement(serializeEntity(row.record!, 'v2'))));
}

/** The EAC-CPF writer of one request: record pages linked under the service's public URL, the registry as agency. */
function eacCpfOf(deps: Pick<ServiceDeps, 'config'>, endpoint: OaiEndpoint): (record: EntityRecord) => string {
  return eacCpfWriter({ origin: endpoint.publicUrl, agencyName: deps.config.OAI_REPOSITORY_NAME });
}

function utf8(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}
