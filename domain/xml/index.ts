// The XML formats of both interface versions: streaming batch reading and
// streaming writers for every document the service produces.

export { readBatch, type BatchReadSummary } from './batch-reader.ts';
export { readEntity } from './entity-reader.ts';
export { serializeBatch, writeBatch } from './batch-writer.ts';
export { entitiesDocument, serializeEntity, writeEntities } from './entity-writer.ts';
export { serializeQueryResult } from './query-writer.ts';
export { serializeBatchResult, v1ErrorType, V1_ERROR_TYPES, type V1ErrorType } from './result-writer.ts';
export { revisionsDocument, writeRevisions } from './revisions-writer.ts';
export { writeUpdates, writeUpdatesFrom } from './updates-writer.ts';
export { escapeAttribute, escapeText } from './escape.ts';
export { vocabularyFor, versionOfNamespace } from './vocabulary.ts';
