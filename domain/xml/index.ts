// The XML formats of both interface versions: streaming batch reading and
// streaming writers for every document the service produces.

export { readBatch } from './batch-reader.ts';
export { serializeBatch, writeBatch } from './batch-writer.ts';
export { entitiesDocument, serializeEntity, writeEntities } from './entity-writer.ts';
export { serializeQueryResult } from './query-writer.ts';
export { serializeBatchResult } from './result-writer.ts';
export { revisionsDocument, writeRevisions } from './revisions-writer.ts';
export { writeUpdates, writeUpdatesFrom } from './updates-writer.ts';
