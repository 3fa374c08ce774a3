import type Router from '@koa/router';
import type { AppDeps } from '../deps.ts';
import { v1BatchesRouter } from './batches/routes.ts';
import { v1EntitiesRouter } from './entities/routes.ts';
import { v1ExportRouter } from './export/routes.ts';
import { v1SearchRouter } from './search/routes.ts';
import { v1UpdatesRouter } from './updates/routes.ts';

/** The legacy interface under /api/v1: the v2 services behind the v1 formats (cam-2019 names). */
export function v1Routers(deps: AppDeps): Router[] {
  return [v1EntitiesRouter(deps), v1BatchesRouter(deps), v1ExportRouter(deps), v1SearchRouter(deps), v1UpdatesRouter(deps)];
}
