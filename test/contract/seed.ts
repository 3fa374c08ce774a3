// Records for the contract run to find. Without them every operation that
// takes an identifier (an entity, a revision, a batch, an export, a
// transaction) answers 404 to whatever schemathesis draws, and its checks
// never reach the code behind the lookup. hooks.py puts the seeded
// identifiers (CONTRACT_SEEDS) in place of drawn ones half of the time, so
// schemathesis still sends its own values, and bad ones, the rest of it.
// (schemathesis's own dictionaries cannot be bound to these parameters: its
// check of the bindings fails on a parameter whose schema is a $ref.)
import pg from 'pg';
import type { Stack } from '../../bench/lib/stack.ts';
import { ServiceClient } from '../faults/lib/client.ts';
import { batchXml, create } from '../support/batches.ts';
import { pollUntil } from '../support/poll.ts';

/** Each parameter name of both documents that names a stored thing, with the values that exist. */
export type ContractData = Record<string, string[]>;

const SEED_TIMEOUT_MS = 60_000;

export async function seedContractData(stack: Stack): Promise<ContractData> {
  const client = new ServiceClient(stack);
  const batchId = await client.submitBatchOk(batchXml([create('e1', 'Nováková, Jana'), create('e2', 'Dvořák, Antonín')]));
  await pollUntil(
    async () => {
      const status = await client.batchStatus(batchId);
      if (status.status === 'FAILED') throw new Error(`the contract's seed batch failed: ${JSON.stringify(status)}`);
      return status.status === 'COMPLETED' ? status : undefined;
    },
    { timeoutMs: SEED_TIMEOUT_MS, intervalMs: 200, what: 'the seed batch to complete' },
  );
  const exportId = await client.startExportOk('snapshots');
  const exported = await client.waitExport(exportId, SEED_TIMEOUT_MS);
  if (exported.status !== 'COMPLETED') throw new Error(`the contract's seed export ended ${exported.status}`);

  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  try {
    const entities = (await db.query<{ id: string; uuid: string }>('select id::text, uuid::text from entity order by id')).rows;
    const revisions = (await db.query<{ uuid: string }>('select uuid::text from revision order by seq')).rows;
    const transactions = (await db.query<{ uuid: string }>('select uuid::text from transaction order by seq')).rows;
    const entityIds = entities.flatMap((entity) => [entity.id, entity.uuid]);
    const transactionIds = transactions.map((transaction) => transaction.uuid);
    return {
      entityId: entityIds,
      apid: entityIds,
      revisionId: revisions.map((revision) => revision.uuid),
      updateRequestId: [batchId],
      bid: [batchId],
      id: [exportId],
      fromTransId: transactionIds,
      toTransId: transactionIds,
    };
  } finally {
    await db.end();
  }
}
