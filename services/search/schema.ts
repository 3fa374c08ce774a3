import { z } from 'zod';
import { ENTITY_STATES, type EntityRef, type EntityState, type XmlVersion } from '../../domain/model.ts';
import { normalizeForSearch } from '../../domain/text.ts';
import {
  COMPARATORS,
  ENTITY_ID_PATTERN,
  INDEX_NAMES,
  SEARCH_PART_TYPES,
  SEARCH_USER_ROLES,
  UUID_PATTERN,
  type Comparator,
  type Condition,
  type ConditionType,
  type SearchQuery,
} from '../../domain/search-query.ts';
import { MAX_CONDITION_DEPTH, MAX_CONDITION_LIST, MAX_CONDITION_NODES, MAX_TEXT_LENGTH, V1_COMPARATORS } from './query.ts';

// The request body of POST /search (QueryParamsDef) as a zod schema, shared
// by v2 and v1. Names are accepted in the spellings of both versions (v2's
// upper-case condTypes and CT_STARTS_WITH/CT_ENDS_WITH/CT_CONTAINS, RS_*
// states; v1's lower-case condTypes and CT_START_WITH/CT_END_WITH/CT_CONTAIN)
// and leave here in one canonical form. The condition tree is recursive, so
// its size is checked on the raw JSON first: zod then never recurses deeper
// than MAX_CONDITION_DEPTH.

export interface QueryParamsSchemaOptions {
  version: XmlVersion;
  /** Accept `codes` (entity ids or UUIDs restricting the search); v2 removed it. Default: version 'v1'. */
  allowCodes?: boolean;
}

/** The record states as the OpenAPI documents name them (RecordState), and as the XML does (ERS_*). */
const RECORD_STATES: Readonly<Record<string, EntityState>> = {
  RS_NEW: 'ERS_NEW',
  RS_APPROVED: 'ERS_APPROVED',
  RS_INVALID: 'ERS_INVALID',
  RS_REPLACED: 'ERS_REPLACED',
};

const MAX_LIST = 1000;
const MAX_CODES = 10_000;

const searchText = z
  .string()
  .max(MAX_TEXT_LENGTH)
  .refine((value) => normalizeForSearch(value) !== '', { message: 'must contain a character other than white space' });

const code = z.string().min(1).max(200);
/** An empty list restricts nothing, as if it were absent. */
const codeList = z
  .array(code)
  .max(MAX_LIST)
  .transform((values) => (values.length === 0 ? undefined : values));

const comparator = z
  .enum([...COMPARATORS, ...(Object.keys(V1_COMPARATORS) as Array<keyof typeof V1_COMPARATORS & string>)])
  .transform((name): Comparator => V1_COMPARATORS[name] ?? (name as Comparator));

/** A condType in either case ('AND' or 'and'), read as its canonical lower-case name. */
function condType<T extends ConditionType>(name: T) {
  return z.enum([name.toUpperCase(), name]).transform((): T => name);
}

function conditionSchema(strict: boolean): z.ZodType<Condition> {
  const object = strict ? z.strictObject : z.object;
  const nested: z.ZodType<Condition> = z.lazy(() => condition);
  const list = z
    .array(nested)
    .min(1)
    .max(MAX_CONDITION_LIST, { message: `an AND/OR list holds at most ${MAX_CONDITION_LIST} conditions` });

  const value = object({
    condType: condType('value'),
    itemTypes: codeList.optional(),
    itemSpecs: codeList.optional(),
    value: searchText.optional(),
    comparator: comparator.optional(),
  })
    // A comparator without a value compares nothing (the real QueryValueCondDef makes both optional):
    // the condition then asks for items of the given types and specs, whatever their value.
    .transform((cond): Condition => {
      const out: Condition = { condType: 'value' };
      if (cond.itemTypes) out.itemTypes = cond.itemTypes;
      if (cond.itemSpecs) out.itemSpecs = cond.itemSpecs;
      if (cond.value !== undefined) {
        out.value = cond.value;
        out.comparator = cond.comparator ?? 'CT_EQ';
      }
      return out;
    });

  const index = object({
    condType: condType('index'),
    name: z.enum(INDEX_NAMES),
    comparator,
    value: searchText,
  });

  const condition: z.ZodType<Condition> = z.discriminatedUnion('condType', [
    object({ condType: condType('and'), conds: list }),
    object({ condType: condType('or'), conds: list }),
    object({ condType: condType('not'), cond: nested }),
    value,
    object({
      condType: condType('part'),
      partType: z.enum(SEARCH_PART_TYPES).optional(),
      onePart: z.boolean().optional(),
      cond: nested.optional(),
    }),
    index,
  ]);
  return condition;
}

function parseCode(value: string | number, ctx: z.RefinementCtx): EntityRef {
  const text = String(value).trim();
  if (ENTITY_ID_PATTERN.test(text)) return { entityId: Number(text) };
  if (UUID_PATTERN.test(text)) return { entityUuid: text.toLowerCase() };
  ctx.addIssue({ code: 'custom', message: 'must be an entity id (number) or a UUID' });
  return z.NEVER;
}

/**
 * The body schema for one API version: v2 is strict (unknown fields and
 * `codes` are errors, as the real v2 removed `codes`); v1 accepts `codes` and
 * ignores fields it does not know, as the legacy API did. Both accept the
 * names of either version.
 */
export function queryParamsSchema(options: QueryParamsSchemaOptions): z.ZodType<SearchQuery> {
  const v1 = options.version === 'v1';
  const allowCodes = options.allowCodes ?? v1;
  const object = v1 ? z.object : z.strictObject;
  const state = z
    .enum([...(Object.keys(RECORD_STATES) as Array<keyof typeof RECORD_STATES & string>), ...ENTITY_STATES])
    .transform((name): EntityState => RECORD_STATES[name] ?? (name as EntityState));
  const role = z.enum(SEARCH_USER_ROLES);
  const codes = allowCodes
    ? z
        .array(z.union([code, z.number().int().positive()]).transform(parseCode))
        .max(MAX_CODES)
        .optional()
    : z.never({ error: 'codes is not supported by this API version' }).optional();

  const body = object({
    types: codeList.optional(),
    state: z
      .array(state)
      .max(ENTITY_STATES.length * 2)
      .transform((values) => (values.length === 0 ? undefined : [...new Set(values)]))
      .optional(),
    user: z.string().min(1).max(200).optional(),
    userUuid: z
      .uuid({ message: 'must be a UUID' })
      .transform((uuid) => uuid.toLowerCase())
      .optional(),
    userName: z.string().min(1).max(200).optional(),
    userRoles: role.optional(),
    /** The project's earlier name of userRoles. */
    userRole: role.optional(),
    codes,
    cond: conditionSchema(!v1).optional(),
    text: searchText.optional(),
  })
    // userRoles is the real field: it wins over the project's earlier name when both are given.
    .transform((parsed): SearchQuery => {
      const query: SearchQuery = {};
      if (parsed.types) query.types = parsed.types;
      if (parsed.state) query.state = parsed.state;
      if (parsed.user !== undefined) query.user = parsed.user;
      if (parsed.userUuid !== undefined) query.userUuid = parsed.userUuid;
      if (parsed.userName !== undefined) query.userName = parsed.userName;
      const userRole = parsed.userRoles ?? parsed.userRole;
      if (userRole !== undefined) query.userRole = userRole;
      if (parsed.codes !== undefined) query.codes = parsed.codes as EntityRef[];
      if (parsed.cond !== undefined) query.cond = parsed.cond;
      if (parsed.text !== undefined) query.text = parsed.text;
      return query;
    });

  return z
    .unknown()
    .superRefine((raw, ctx) => checkConditionTree(raw, ctx))
    .pipe(body);
}

/**
 * Walks the raw condition tree without recursion and reports the first node
 * deeper than MAX_CONDITION_DEPTH, or the tree exceeding MAX_CONDITION_NODES,
 * with its path.
 */
function checkConditionTree(raw: unknown, ctx: z.RefinementCtx): void {
  if (typeof raw !== 'object' || raw === null || !('cond' in raw)) return;
  const stack: Array<{ node: unknown; path: (string | number)[]; depth: number }> = [{ node: raw.cond, path: ['cond'], depth: 1 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_CONDITION_DEPTH) {
      ctx.addIssue({ code: 'custom', path, message: `conditions may nest at most ${MAX_CONDITION_DEPTH} levels deep` });
      return;
    }
    nodes += 1;
    if (nodes > MAX_CONDITION_NODES) {
      ctx.addIssue({ code: 'custom', path, message: `a query may hold at most ${MAX_CONDITION_NODES} conditions` });
      return;
    }
    const children = node as { cond?: unknown; conds?: unknown };
    if (Array.isArray(children.conds)) {
      if (nodes + children.conds.length > MAX_CONDITION_NODES) {
        ctx.addIssue({ code: 'custom', path: [...path, 'conds'], message: `a query may hold at most ${MAX_CONDITION_NODES} conditions` });
        return;
      }
      children.conds.forEach((child, index) => stack.push({ node: child, path: [...path, 'conds', index], depth: depth + 1 }));
    }
    if (children.cond !== undefined) stack.push({ node: children.cond, path: [...path, 'cond'], depth: depth + 1 });
  }
}
