import Router from '@koa/router';
import type { XmlVersion } from '../../domain/model.ts';
import { serializeEntity } from '../../domain/xml/index.ts';
import { findCurrentRecord, findRecordAtRevision } from '../../services/reads/entities.ts';
import { readSideFor } from '../../services/reads/read-side.ts';
import { etagMatches, recordEtag } from '../conditional.ts';
import type { AppDeps } from '../deps.ts';
import { requirePermission } from '../middleware/auth.ts';
import { entityRefParam, parseParams } from '../params.ts';
import { problem } from '../problems.ts';
import { revisionPathSchema } from '../v2/entities/schema.ts';
import { setXmlType } from '../xml-type.ts';
import { answerEacCpf, prefersEacCpf } from './eac-cpf.ts';

// Entity reads, one router per interface version: each names the path
// parameter as its OpenAPI does; only v2 reads a record as of a revision.
export const ENTITY_ID_PARAMETER = { v1: 'apid', v2: 'entityId' } as const;

export function entitiesRouter(deps: AppDeps, version: XmlVersion): Router {
  const router = new Router({ prefix: `/api/${version}/entities` });
  const id = ENTITY_ID_PARAMETER[version];

  router.get(`/:${id}`, requirePermission('read'), async (ctx) => {
    // The hottest read: logged at debug when it succeeds (api/middleware/request-context.ts).
    // Most of these GETs are answered before Koa, by entity-get.ts, exactly as here.
    ctx.state.routineRead = true;
    const { records } = await readSideFor(deps.db.reads, ctx.state.principal.name);
    const record = await findCurrentRecord(records, entityRefParam(ctx, id));
    if (!record) throw problem(404, 'EntityNotFound', `no entity ${ctx.params[id]}`);
    ctx.set('Cache-Control', 'no-cache');
    if (version === 'v2') {
      // v2 answers EAC-CPF to a client that prefers it (eac-cpf.ts); entity-get.ts leaves every Accept but */* to this route.
      ctx.vary('Accept');
      if (prefersEacCpf(ctx)) return answerEacCpf(ctx, deps, record);
    }
    if (etagMatches(ctx, recordEtag(record))) {
      ctx.status = 304;
      return;
    }
    setXmlType(ctx, version);
    ctx.body = serializeEntity(record, version);
  });

  if (version === 'v2') {
    router.get(`/:${id}/revision/:revisionId`, requirePermission('read'), async (ctx) => {
      const entityId = entityRefParam(ctx, id);
      const { revisionId } = parseParams(ctx, revisionPathSchema);
      const { records } = await readSideFor(deps.db.reads, ctx.state.principal.name);
      const record = await findRecordAtRevision(records, entityId, revisionId);
      if (!record) throw problem(404, 'RevisionNotFound', `entity ${ctx.params[id]} has no revision ${revisionId}`);
      ctx.vary('Accept');
      if (prefersEacCpf(ctx)) return answerEacCpf(ctx, deps, record);
      etagMatches(ctx, recordEtag(record));
      setXmlType(ctx, version);
      ctx.body = serializeEntity(record, version);
    });
  }

  return router;
}
