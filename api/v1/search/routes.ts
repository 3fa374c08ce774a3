import Router from '@koa/router';
import { serializeQueryResult } from '../../../domain/xml/index.ts';
import { searchEntities } from '../../../services/search/index.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { checkPageSize, parseQuery, parseWith } from '../../params.ts';
import { readJsonBody } from '../../body.ts';
import { setV1XmlType } from '../xml.ts';
import { SEARCH_BODY_MAX_BYTES, searchQuerySchema, v1SearchBodySchema } from './schema.ts';

export function v1SearchRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v1/search' });

  router.post('/', requirePermission('read'), async (ctx) => {
    const { page, pageSize, searchType } = parseQuery(ctx, searchQuerySchema);
    checkPageSize(pageSize, deps.config.SEARCH_MAX_PAGE_SIZE);
    const body = parseWith(v1SearchBodySchema, await readJsonBody(ctx, SEARCH_BODY_MAX_BYTES), 'body');
    const limits = { statementTimeoutMs: deps.config.SEARCH_STATEMENT_TIMEOUT_MS, maxCountCost: deps.config.SEARCH_MAX_COUNT_COST, maxFulltextNames: deps.config.SEARCH_FULLTEXT_MAX_NAMES };
    const result = await searchEntities(deps.db.search, body, { page, pageSize }, searchType, limits);
    setV1XmlType(ctx);
    ctx.body = serializeQueryResult(result, 'v1');
  });

  return router;
}
