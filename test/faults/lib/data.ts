// Batches for the scenarios, from the one generator (bench/lib/generate.ts).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeGeneratedBatch } from '../../../bench/lib/generate.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { check, type ScenarioContext } from './scenario.ts';

export interface GeneratedBatch {
  batchId: string;
  entityType: string;
  count: number;
  body: Buffer;
}

let seed = 1;

/** `count` new entities of a type of their own, as one v2 batch with a known batch UUID. */
export async function generatedBatch(
  context: Pick<ScenarioContext, 'work' | 'tag'>,
  label: string,
  count: number,
  options: { entityType?: string } = {},
): Promise<GeneratedBatch> {
  const batchId = randomUUID();
  const entityType = options.entityType ?? `FAULT_${label}_${context.tag}`.toUpperCase();
  const file = join(context.work, `${label}-${batchId}.xml`);
  await writeGeneratedBatch(file, count, { seed: seed++, localIdPrefix: `${label}-`, entityType, batchUuid: batchId });
  return { batchId, entityType, count, body: readFileSync(file) };
}

/** As generatedBatch, submitted and COMPLETED within `timeoutMs`: the records a scenario works on. */
export async function seededBatch(
  context: Pick<ScenarioContext, 'work' | 'tag' | 'client' | 'db'>,
  label: string,
  count: number,
  timeoutMs: number,
): Promise<GeneratedBatch> {
  const batch = await generatedBatch(context, label, count);
  await context.client.submitBatchOk(batch.body);
  const ended = await batchEnded(context.db.pool, batch.batchId, timeoutMs);
  check(ended.status === 'COMPLETED', `seed batch ${batch.batchId} (${label}) ended ${ended.status}: ${ended.error}`);
  return batch;
}

/** The number of `<element ` start tags in an XML text. */
export function countElements(xml: string, element: string): number {
  let count = 0;
  const needle = `<${element} `;
  for (let at = xml.indexOf(needle); at !== -1; at = xml.indexOf(needle, at + needle.length)) count += 1;
  return count;
}
