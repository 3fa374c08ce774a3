import type { EntityRef } from '../../domain/model.ts';

// Addresses of the pages and of the same records in the API. A record's
// canonical page is by number; a reference that names a UUID alone links by it.

export function recordPath(ref: EntityRef): string {
  return `/global/${ref.entityId ?? encodeURIComponent(ref.entityUuid ?? '')}`;
}

export function revisionPath(entityId: number, revisionId: string): string {
  return `/global/${entityId}/revision/${encodeURIComponent(revisionId)}`;
}

export function historyPath(entityId: number, page = 1): string {
  return `/global/${entityId}/revisions${page > 1 ? `?page=${page}` : ''}`;
}

export function apiRecordPath(entityId: number): string {
  return `/api/v2/entities/${entityId}`;
}

export function apiRevisionPath(entityId: number, revisionId: string): string {
  return `/api/v2/entities/${entityId}/revision/${encodeURIComponent(revisionId)}`;
}

/** How a reference is looked up among the records a page resolved. */
export function refKey(ref: EntityRef): string {
  return ref.entityId !== undefined ? `id:${ref.entityId}` : `uuid:${(ref.entityUuid ?? '').toLowerCase()}`;
}
