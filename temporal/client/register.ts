import type { ConnectionLike } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../search-attributes.ts';

// A CommonJS package: Node's ESM loader offers its namespace only as the default export.
const INDEXED_TYPES = { KEYWORD: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD } as const;

/**
 * Registers the custom search attributes the workflows use on `namespace`,
 * those it does not have yet; returns their names. Idempotent: the recovery
 * sweep calls it every round, and a workflow started or upserting with an
 * unregistered attribute would fail.
 */
export async function registerSearchAttributes(connection: Pick<ConnectionLike, 'operatorService'>, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(SEARCH_ATTRIBUTES).filter((key) => customAttributes?.[key.name] === undefined);
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_TYPES[key.type]])),
  });
  return missing.map((key) => key.name);
}
