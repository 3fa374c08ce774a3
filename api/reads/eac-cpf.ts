import type { Context } from 'koa';
import { EAC_CPF, eacCpfDocumentWriter } from '../../domain/eac-cpf/writer.ts';
import type { EntityRecord } from '../../domain/model.ts';
import { etagMatches, recordEtag } from '../conditional.ts';
import { publicBaseUrl } from '../public-url.ts';
import type { AppDeps } from '../deps.ts';

// A v2 record in EAC-CPF 2.0 for a client whose Accept prefers its media
// type (docs/decisions/0200) to application/xml; every other Accept keeps
// the registry's own document, as before.

/** Whether the request's Accept prefers EAC-CPF; without Accept, or with `*∕*`, it does not. */
export function prefersEacCpf(ctx: Context): boolean {
  return ctx.accepts('application/xml', EAC_CPF.mediaType) === EAC_CPF.mediaType;
}

/**
 * Answers the record as EAC-CPF: its own strong tag (another representation
 * of the same revision), 304 when the client has it, relations and the page
 * link under the service's public URL (api/public-url.ts).
 */
export function answerEacCpf(ctx: Context, deps: AppDeps, record: EntityRecord): void {
  if (etagMatches(ctx, `${recordEtag(record)}.eac`)) {
    ctx.status = 304;
    return;
  }
  const document = eacCpfDocumentWriter({ origin: publicBaseUrl(ctx, deps.config), agencyName: deps.config.OAI_REPOSITORY_NAME });
  ctx.type = EAC_CPF.mediaType;
  ctx.body = document(record);
}
