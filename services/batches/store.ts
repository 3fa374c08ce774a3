// The batch rows live in db/batches.ts (deps.db.batches). What remains here
// is for services/batches/test-batch.ts until it reads through deps.db.batches
// too: the status of a batch and a live twin of its body, on a connection.
export { findBatchStatus as findBatch, findLiveBatchWithBody } from '../../db/batches.ts';
