import type { Context } from 'koa';
import { ENTITY_STATES, type EntityRef, type EntityState } from '../../domain/model.ts';
import { ENTITY_ID_PATTERN, UUID_PATTERN } from '../../domain/search-query.ts';
import { PageError } from './respond.ts';
import type { SearchForm } from './search-view.ts';

// What the pages read from a request: the path's record and revision, and the
// few query parameters they know. Any other query parameter is ignored
// (browsers and link shorteners add their own); a known one with a bad value
// is a 400 page that says which.

/** The most results pages a search walks: deeper, a person narrows the search. */
const MAX_PAGE = 500;
const MAX_NAME_LENGTH = 200;
const MAX_TYPES = 20;
const TYPE_PATTERN = /^[\w.:-]{1,100}$/;

function badRequest(message: string): PageError {
  return new PageError(400, 'Bad request', message);
}

/** The record a path names, by number or UUID; 400 for anything else. */
export function recordRefParam(value: string | undefined): EntityRef {
  if (value !== undefined && ENTITY_ID_PATTERN.test(value)) return { entityId: Number(value) };
  if (value !== undefined && UUID_PATTERN.test(value)) return { entityUuid: value.toLowerCase() };
  throw badRequest(`"${value ?? ''}" is neither a record number nor a UUID.`);
}

export function revisionParam(value: string | undefined): string {
  if (value !== undefined && UUID_PATTERN.test(value)) return value.toLowerCase();
  throw badRequest(`"${value ?? ''}" is not a revision's UUID.`);
}

function single(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw badRequest(`The parameter ${name} is given more than once.`);
  return value;
}

function list(ctx: Context, name: string): string[] {
  const value = ctx.query[name];
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  // An empty choice ("Any type") asks for nothing.
  return values.filter((entry) => entry !== '');
}

export function pageParam(ctx: Context): number {
  const value = single(ctx, 'page');
  if (value === undefined || value === '') return 1;
  if (!/^[1-9][0-9]{0,5}$/.test(value) || Number(value) > MAX_PAGE)
    throw badRequest(`The page must be a whole number from 1 to ${MAX_PAGE}; narrow the search to see records past that.`);
  return Number(value);
}

export function searchFormParams(ctx: Context): SearchForm {
  const name = single(ctx, 'name') ?? '';
  if (name.length > MAX_NAME_LENGTH) throw badRequest(`The name may have at most ${MAX_NAME_LENGTH} characters.`);
  const types = [...new Set(list(ctx, 'type'))];
  if (types.length > MAX_TYPES || types.some((type) => !TYPE_PATTERN.test(type)))
    throw badRequest(`The type must be an entity type's code, at most ${MAX_TYPES} of them.`);
  const states = [...new Set(list(ctx, 'state'))];
  const unknown = states.find((state) => !(ENTITY_STATES as readonly string[]).includes(state));
  if (unknown !== undefined) throw badRequest(`"${unknown}" is not a state; the states are ${ENTITY_STATES.join(', ')}.`);
  return { name, types, states: states as EntityState[] };
}

/**
 * Where to go after signing in: a record page's own path, else the front door
 * (never another site). Characters beyond ASCII are percent-encoded (as UTF-8):
 * the path goes into a Location header, which carries bytes, not text.
 */
export function nextParam(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) return '/global';
  if (!/^\/global(?:[/?]|$)/.test(value) || /[\\\s]/.test(value)) return '/global';
  return value.toWellFormed().replace(/[^\x21-\x7e]+/g, encodeURIComponent);
}
