// Submits a v2 batch through the API and waits until it has been applied.
import type { Harness } from './harness.ts';
import { batchEnded } from './batch-ended.ts';

export interface AppliedRevision {
  entityId: number;
  entityUuid: string;
  rev: string;
}

export interface AppliedBatch {
  batchId: string;
  /** The batch's result document (batchChangeSuccess). */
  result: string;
  transaction: string;
  /** The revisions of the result by localId. */
  revisions: Map<string, AppliedRevision>;
}

/** Fails the calling test unless the batch is accepted and COMPLETED. */
export async function applyBatch(harness: Harness, xml: string): Promise<AppliedBatch> {
  const submitted = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
  if (submitted.status !== 200) throw new Error(`batch answered ${submitted.status}: ${await submitted.text()}`);
  const updateRequestId = (await submitted.json()) as string;
  const { status } = await batchEnded(harness, updateRequestId);
  const result = await (await harness.api(`/api/v2/batches/${updateRequestId}/result`)).text();
  if (status !== 'COMPLETED') throw new Error(`batch ${updateRequestId} ${status}: ${result}`);
  const revisions = new Map<string, AppliedRevision>();
  for (const [, attributes] of result.matchAll(/<revision ([^>]*)\/>/g)) {
    const attribute = (key: string) => new RegExp(`\\b${key}="([^"]*)"`).exec(attributes!)![1]!;
    revisions.set(attribute('localId'), {
      entityId: Number(attribute('entityId')),
      entityUuid: attribute('entityUuid'),
      rev: attribute('rev'),
    });
  }
  return { batchId: updateRequestId, result, transaction: /transaction="([^"]+)"/.exec(result)![1]!, revisions };
}
