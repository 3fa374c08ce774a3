// OAI-PMH 2.0 requests: which arguments each verb takes, and the protocol
// error an argument causes. Pure: the API hands in the arguments as sent.

import { METADATA_PREFIXES, metadataPrefixOf, type MetadataPrefix } from './formats.ts';
import type { HarvestQuery, ResumptionToken, TokenCodec } from './token.ts';

export type { MetadataPrefix } from './formats.ts';

const OAI_VERBS = ['Identify', 'ListMetadataFormats', 'ListSets', 'ListIdentifiers', 'ListRecords', 'GetRecord'] as const;
type OaiVerb = (typeof OAI_VERBS)[number];

type OaiErrorCode =
  | 'badArgument'
  | 'badResumptionToken'
  | 'badVerb'
  | 'cannotDisseminateFormat'
  | 'idDoesNotExist'
  | 'noRecordsMatch'
  | 'noMetadataFormats'
  | 'noSetHierarchy';

export interface OaiError {
  code: OaiErrorCode;
  message: string;
}

/** A request the protocol accepts, with its arguments checked. */
export type OaiRequest =
  | { verb: 'Identify' }
  | { verb: 'ListMetadataFormats'; identifier?: string }
  | { verb: 'ListSets' }
  | { verb: 'GetRecord'; identifier: string; metadataPrefix: MetadataPrefix }
  | { verb: 'ListIdentifiers' | 'ListRecords'; query: HarvestQuery; token?: ResumptionToken };

export type ParsedRequest =
  { ok: true; request: OaiRequest; arguments: Record<string, string> } | { ok: false; error: OaiError; arguments?: Record<string, string> };

const ALLOWED: Record<OaiVerb, { required: string[]; optional: string[]; exclusive?: string }> = {
  Identify: { required: [], optional: [] },
  ListMetadataFormats: { required: [], optional: ['identifier'] },
  ListSets: { required: [], optional: [], exclusive: 'resumptionToken' },
  GetRecord: { required: ['identifier', 'metadataPrefix'], optional: [] },
  ListIdentifiers: { required: ['metadataPrefix'], optional: ['from', 'until', 'set'], exclusive: 'resumptionToken' },
  ListRecords: { required: ['metadataPrefix'], optional: ['from', 'until', 'set'], exclusive: 'resumptionToken' },
};

const badArgument = (message: string): OaiError => ({ code: 'badArgument', message });

/** A character XML 1.0 cannot carry: such an argument could be neither echoed nor quoted in a well-formed answer. */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * Checks a request's arguments (each name with every value it was sent
 * with, in order) against its verb. `request` is what the response echoes:
 * set only when the verb and arguments are valid (the protocol echoes no
 * attributes with badVerb and badArgument).
 */
export function parseOaiRequest(sent: ReadonlyArray<readonly [string, string]>, tokens: TokenCodec): ParsedRequest {
  for (const [name, value] of sent) {
    if (NOT_XML.test(name) || NOT_XML.test(value)) {
      return name === 'verb'
        ? { ok: false, error: { code: 'badVerb', message: 'the verb holds a character XML cannot carry' } }
        : { ok: false, error: badArgument('an argument holds a character XML cannot carry') };
    }
  }
  const values = new Map<string, string[]>();
  for (const [name, value] of sent) values.set(name, [...(values.get(name) ?? []), value]);
  const verbs = values.get('verb') ?? [];
  if (verbs.length === 0) return { ok: false, error: { code: 'badVerb', message: 'the verb argument is missing' } };
  if (verbs.length > 1) return { ok: false, error: { code: 'badVerb', message: 'the verb argument is repeated' } };
  const verb = verbs[0]!;
  if (!(OAI_VERBS as readonly string[]).includes(verb))
    return { ok: false, error: { code: 'badVerb', message: `${JSON.stringify(verb)} is not an OAI-PMH verb` } };
  const allowed = ALLOWED[verb as OaiVerb];
  const args: Record<string, string> = {};
  for (const [name, list] of values) {
    if (name === 'verb') continue;
    if (!allowed.required.includes(name) && !allowed.optional.includes(name) && allowed.exclusive !== name) {
      return { ok: false, error: badArgument(`${verb} takes no argument ${JSON.stringify(name)}`) };
    }
    if (list.length > 1) return { ok: false, error: badArgument(`the argument ${name} is repeated`) };
    args[name] = list[0]!;
  }
  const echoed = { verb, ...args };
  const checked = checkArguments(verb as OaiVerb, args, tokens);
  return 'error' in checked
    ? { ok: false, error: checked.error, ...(checked.error.code === 'badArgument' ? {} : { arguments: echoed }) }
    : { ok: true, request: checked.request, arguments: echoed };
}

function checkArguments(verb: OaiVerb, args: Record<string, string>, tokens: TokenCodec): { request: OaiRequest } | { error: OaiError } {
  const allowed = ALLOWED[verb];
  const exclusive = allowed.exclusive !== undefined && args[allowed.exclusive] !== undefined;
  if (exclusive && Object.keys(args).length > 1)
    return { error: badArgument(`${allowed.exclusive} is an exclusive argument: send it alone with the verb`) };
  if (!exclusive) {
    for (const name of allowed.required) if (args[name] === undefined) return { error: badArgument(`${verb} needs the argument ${name}`) };
  }
  for (const [name, value] of Object.entries(args)) if (value === '') return { error: badArgument(`the argument ${name} is empty`) };

  switch (verb) {
    case 'Identify':
      return { request: { verb } };
    case 'ListMetadataFormats':
      return { request: args.identifier === undefined ? { verb } : { verb, identifier: args.identifier } };
    case 'ListSets':
      // The sets fit one response: no token of this repository continues them.
      if (exclusive)
        return {
          error: { code: 'badResumptionToken', message: 'ListSets answers in one response: this repository issued no token for it' },
        };
      return { request: { verb } };
    case 'GetRecord': {
      const prefix = metadataPrefixOf(args.metadataPrefix!);
      if (prefix === undefined) return { error: cannotDisseminate(args.metadataPrefix!) };
      return { request: { verb, identifier: args.identifier!, metadataPrefix: prefix } };
    }
    case 'ListIdentifiers':
    case 'ListRecords':
      return exclusive ? listFromToken(verb, args.resumptionToken!, tokens) : listFromArguments(verb, args);
  }
}

function listFromToken(
  verb: 'ListIdentifiers' | 'ListRecords',
  text: string,
  tokens: TokenCodec,
): { request: OaiRequest } | { error: OaiError } {
  const token = tokens.decode(text);
  if (token === undefined || token.verb !== verb)
    return { error: { code: 'badResumptionToken', message: `the resumptionToken is not one this repository issued for ${verb}` } };
  return { request: { verb, query: token.query, token } };
}

function listFromArguments(
  verb: 'ListIdentifiers' | 'ListRecords',
  args: Record<string, string>,
): { request: OaiRequest } | { error: OaiError } {
  const from = args.from === undefined ? undefined : utcDatestamp(args.from, 'from');
  const until = args.until === undefined ? undefined : utcDatestamp(args.until, 'until');
  if (from === null)
    return { error: badArgument(`from ${JSON.stringify(args.from)} is not a UTC datestamp (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)`) };
  if (until === null)
    return { error: badArgument(`until ${JSON.stringify(args.until)} is not a UTC datestamp (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)`) };
  if (from !== undefined && until !== undefined) {
    if (args.from!.length !== args.until!.length) return { error: badArgument('from and until have different granularities') };
    if (from.getTime() > until.getTime()) return { error: badArgument('from is later than until') };
  }
  const prefix = metadataPrefixOf(args.metadataPrefix!);
  if (prefix === undefined) return { error: cannotDisseminate(args.metadataPrefix!) };
  let entityType: string | undefined;
  if (args.set !== undefined && args.set !== TYPE_SETS) {
    entityType = entityTypeOfSet(args.set);
    if (entityType === undefined)
      return { error: { code: 'noRecordsMatch', message: `no set ${JSON.stringify(args.set)}: the sets are type and type:<entity type>` } };
  }
  const query: HarvestQuery = { metadataPrefix: prefix };
  if (entityType !== undefined) query.entityType = entityType;
  if (from !== undefined) query.from = from.toISOString();
  if (until !== undefined) query.until = until.toISOString();
  return { request: { verb, query } };
}

function cannotDisseminate(prefix: string): OaiError {
  return {
    code: 'cannotDisseminateFormat',
    message: `${JSON.stringify(prefix)} is not a format of this repository: ${METADATA_PREFIXES.join(', ')}`,
  };
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const SECOND = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/**
 * A from or until argument as an instant, or null when it is not a UTC
 * datestamp of this repository's granularity (or coarser). A day's until is
 * its last second: until is inclusive.
 */
export function utcDatestamp(value: string, bound: 'from' | 'until'): Date | null {
  const day = DAY.exec(value);
  const second = day ? undefined : SECOND.exec(value);
  const parts = (day ?? second)?.slice(1).map(Number);
  if (parts === undefined) return null;
  const [year, month, date, hours = 0, minutes = 0, seconds = 0] = parts as [number, number, number, number?, number?, number?];
  const instant = new Date(Date.UTC(year, month - 1, date, hours, minutes, seconds));
  // Date.UTC rolls over (Feb 30 is Mar 2): a value that does not come back unchanged is no date.
  if (
    instant.getUTCFullYear() !== year ||
    instant.getUTCMonth() !== month - 1 ||
    instant.getUTCDate() !== date ||
    hours > 23 ||
    minutes > 59 ||
    seconds > 59
  )
    return null;
  if (day && bound === 'until') return new Date(instant.getTime() + 86_399_000);
  return instant;
}

/** The parent of the entity types' sets: every record is in it (ListSets is never empty, even before the first record). */
export const TYPE_SETS = 'type';

/** The set of one entity type. */
export function setOfEntityType(entityType: string): string {
  return `type:${entityType}`;
}

/** Entity types whose name can be a set's (setSpec's characters). */
const SET_SPEC_PART = /^[A-Za-z0-9\-_.!~*'()]+$/;

export function entityTypeOfSet(set: string): string | undefined {
  const entityType = set.startsWith('type:') ? set.slice('type:'.length) : undefined;
  return entityType !== undefined && SET_SPEC_PART.test(entityType) ? entityType : undefined;
}

export function hasSet(entityType: string): boolean {
  return SET_SPEC_PART.test(entityType);
}

/** oai:{repository id}:{entity uuid}. */
export function oaiIdentifier(repositoryId: string, entityUuid: string): string {
  return `oai:${repositoryId}:${entityUuid}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The entity UUID an identifier of this repository names; undefined for any other identifier (one identifier per record: the UUID lower-cased, as served). */
export function entityUuidOf(repositoryId: string, identifier: string): string | undefined {
  const prefix = `oai:${repositoryId}:`;
  if (!identifier.startsWith(prefix)) return undefined;
  const uuid = identifier.slice(prefix.length);
  return UUID.test(uuid) ? uuid : undefined;
}
