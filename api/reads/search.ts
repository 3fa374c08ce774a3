import { readSideFor } from '../../services/reads/read-side.ts';
import Router from '@koa/router';
import type { XmlVersion } from '../../domain/model.ts';
import { serializeQueryResult } from '../../domain/xml/index.ts';
import { searchEntities } from '../../services/search/index.ts';
import { readJsonBody } from '../body.ts';
import type { AppDeps } from '../deps.ts';
import { requirePermission } from '../middleware/auth.ts';
import { checkPageSize, parseQuery, parseWith } from '../params.ts';
import { v1SearchBodySchema } from '../v1/search/schema.ts';
import { SEARCH_BODY_MAX_BYTES, searchBodySchema, searchQuerySchema } from '../v2/search/schema.ts';
import { setXmlType } from '../xml-type.ts';

// Search, one router per interface version: the same paging, limits and use
// case; each version's body is its own QueryParamsDef, and so is the XML answer.
const BODY_SCHEMAS = { v1: v1SearchBodySchema, v2: searchBodySchema };

/**
 * Names the requested entity types that no record has: a 400 would refuse the
 * real client, which sends a class with all its subclass codes, some unused;
 * strict JSON and XML clients ignore a header (the CLI prints it as a warning).
 */
const UNKNOWN_TYPES_HEADER = 'X-Unknown-Entity-Types';

/** Longest header value: a request may name 1000 types of 200 characters, and proxies refuse large headers. */
const UNKNOWN_TYPES_MAX_LENGTH = 2000;

/** The types percent-encoded (a code may hold any character, a header only visible ASCII), comma-separated, as many as fit. */
export function unknownTypesHeader(types: readonly string[]): string {
  let value = '';
  for (const type of types) {
    const next = value === '' ? encodeURIComponent(type) : `${value}, ${encodeURIComponent(type)}`;
    if (next.length > UNKNOWN_TYPES_MAX_LENGTH) break;
    value = next;
  }
  return value;
}

export function searchRouter(deps: AppDeps, version: XmlVersion): Router {
  const router = new Router({ prefix: `/api/${version}/search` });
  const limits = {
    statementTimeoutMs: deps.config.SEARCH_STATEMENT_TIMEOUT_MS,
    maxMatches: deps.config.SEARCH_MAX_MATCHES,
  };

  router.post('/', requirePermission('read'), async (ctx) => {
    const { page, pageSize, searchType } = parseQuery(ctx, searchQuerySchema);
    checkPageSize(pageSize, deps.config.SEARCH_MAX_PAGE_SIZE);
    const body = parseWith(BODY_SCHEMAS[version], await readJsonBody(ctx, SEARCH_BODY_MAX_BYTES), 'body');
    const { unknownTypes, ...result } = await searchEntities(
      (await readSideFor(deps.db.reads, ctx.state.principal.name)).search,
      body,
      { page, pageSize },
      searchType,
      limits,
    );
    const unknown = unknownTypesHeader(unknownTypes);
    if (unknown !== '') ctx.set(UNKNOWN_TYPES_HEADER, unknown);
    setXmlType(ctx, version);
    ctx.body = serializeQueryResult(result, version);
  });

  return router;
}
