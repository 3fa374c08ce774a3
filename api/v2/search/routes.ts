import Router from '@koa/router';
import { serializeQueryResult } from '../../../domain/xml/index.ts';
import { searchEntities } from '../../../services/search/index.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { checkPageSize, parseQuery, parseWith } from '../../params.ts';
import { readJsonBody } from '../../body.ts';
import { SEARCH_BODY_MAX_BYTES, searchBodySchema, searchQuerySchema } from './schema.ts';

export function searchRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/search' });

  router.post('/', requirePermission('read'), async (ctx) => {
    const { page, pageSize, searchType } = parseQuery(ctx, searchQuerySchema);
    checkPageSize(pageSize, deps.config.SEARCH_MAX_PAGE_SIZE);
    const body = parseWith(searchBodySchema, await readJsonBody(ctx, SEARCH_BODY_MAX_BYTES), 'body');
    const limits = { statementTimeoutMs: deps.config.SEARCH_STATEMENT_TIMEOUT_MS, maxCountCost: deps.config.SEARCH_MAX_COUNT_COST, maxFulltextNames: deps.config.SEARCH_FULLTEXT_MAX_NAMES };
    const result = await searchEntities(deps.db.search, body, { page, pageSize }, searchType, limits);
    ctx.type = 'application/xml';
    ctx.body = serializeQueryResult(result, 'v2');
  });

  return router;
}
