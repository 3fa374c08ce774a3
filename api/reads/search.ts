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

export function searchRouter(deps: AppDeps, version: XmlVersion): Router {
  const router = new Router({ prefix: `/api/${version}/search` });
  const limits = { statementTimeoutMs: deps.config.SEARCH_STATEMENT_TIMEOUT_MS, maxCountCost: deps.config.SEARCH_MAX_COUNT_COST, maxFulltextNames: deps.config.SEARCH_FULLTEXT_MAX_NAMES };

  router.post('/', requirePermission('read'), async (ctx) => {
    const { page, pageSize, searchType } = parseQuery(ctx, searchQuerySchema);
    checkPageSize(pageSize, deps.config.SEARCH_MAX_PAGE_SIZE);
    const body = parseWith(BODY_SCHEMAS[version], await readJsonBody(ctx, SEARCH_BODY_MAX_BYTES), 'body');
    const result = await searchEntities(deps.db.search, body, { page, pageSize }, searchType, limits);
    setXmlType(ctx, version);
    ctx.body = serializeQueryResult(result, version);
  });

  return router;
}
