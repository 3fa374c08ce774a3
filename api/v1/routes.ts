import type Router from '@koa/router';
import type { AppDeps } from '../deps.ts';
import { entitiesRouter } from '../reads/entities.ts';
import { searchRouter } from '../reads/search.ts';
import { updatesRouter } from '../reads/updates.ts';
import { v1BatchesRouter } from './batches/routes.ts';
import { v1ExportRouter } from './export/routes.ts';

/** The legacy interface under /api/v1: the v2 services behind the v1 formats (cam-2019 names). */
export function v1Routers(deps: AppDeps): Router[] {
  return [entitiesRouter(deps, 'v1'), v1BatchesRouter(deps), v1ExportRouter(deps), searchRouter(deps, 'v1'), updatesRouter(deps, 'v1')];
}
