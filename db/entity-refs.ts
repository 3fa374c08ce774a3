import type { EntityRef } from '../domain/model.ts';

/** Entity references as the two array parameters of `id = any($n::bigint[]) or uuid = any($m::uuid[])`. */
export function splitRefs(refs: readonly EntityRef[]): { ids: string[]; uuids: string[] } {
  const ids: string[] = [];
  const uuids: string[] = [];
  for (const ref of refs) {
    if (ref.entityId !== undefined) ids.push(String(ref.entityId));
    if (ref.entityUuid !== undefined) uuids.push(ref.entityUuid.toLowerCase());
  }
  return { ids, uuids };
}
