import { z } from 'zod';
import type { RequestedId } from '../../../services/exports/ids.ts';
import { uuidSchema } from '../../params.ts';
import { problem, type ProblemDetail } from '../../problems.ts';

export const exportPathSchema = z.object({ id: uuidSchema });

export const revisionsQuerySchema = z.object({ fromTransId: uuidSchema });

/** The snapshot's format: the registry's v2 XML (absent, or `v2`) or EAC-CPF 2.0. */
export const snapshotsQuerySchema = z.object({ format: z.enum(['v2', 'eac-cpf']).optional() });

/**
 * An entity reference (a JSON number, or a string of digits) or a UUID. A
 * number beyond any record's (int32) is a reference to no record: it is
 * listed as missing, as any unknown one is.
 */
const requestedIdSchema = z.union([
  z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^[1-9][0-9]{0,15}$/),
  uuidSchema,
]);

/** Bad elements named in one answer; a list of a hundred thousand mistakes needs only the first few. */
const MAX_REPORTED = 100;

/**
 * The body of both start operations: a JSON array of entity identifiers,
 * numbers and UUIDs mixed; empty means every record. A bad element is named
 * by its index (`body.<index>`).
 */
export function parseRequestedIds(body: unknown, maxIds: number): RequestedId[] {
  if (!Array.isArray(body)) throw problem(400, 'BadRequest', 'the body must be a JSON array of entity identifiers (numbers or UUIDs)');
  if (body.length > maxIds) throw problem(400, 'BadRequest', `at most ${maxIds} identifiers may be requested at once; got ${body.length}`);
  const errors: ProblemDetail[] = [];
  let bad = 0;
  for (const [index, element] of body.entries()) {
    if (requestedIdSchema.safeParse(element).success) continue;
    bad += 1;
    if (errors.length < MAX_REPORTED) errors.push({ path: `body.${index}`, message: 'must be an entity number or a UUID' });
  }
  if (bad > 0) throw problem(400, 'BadRequest', `${bad} of the identifiers are neither an entity number nor a UUID`, errors);
  return body as RequestedId[];
}
