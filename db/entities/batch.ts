import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { BatchResult } from '../../domain/model.ts';

export type BatchStatus = 'ACCEPTED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

export const BatchSchema = defineEntity({
  name: 'Batch',
  tableName: 'batch',
  properties: {
    id: p.uuid().primary(),
    bodySha256: p.text(),
    apiVersion: p.text().$type<'v1' | 'v2'>(),
    submittedBy: p.text(),
    status: p.text().$type<BatchStatus>(),
    force: p.boolean().default(false),
    offeredForceKey: p.text().nullable(),
    changesTotal: p.integer().nullable(),
    changesApplied: p.integer().default(0),
    /** Megabytes for a large batch: status reads leave it out (`exclude`) and ask `hasResult` instead. */
    result: p.json<BatchResult>().nullable(),
    /** Whether the batch has a result document, without reading it (a FAILED batch without one could not be processed). */
    hasResult: p.formula<boolean>((columns) => `${columns.result} is not null`).type('boolean'),
    error: p.text().nullable(),
    /** Submissions of this batch id (a FAILED batch may be sent again). */
    attempt: p.integer().default(1),
    /** Attempts Temporal started of the batch's apply activity (each records its number as it starts). */
    activityAttempts: p.integer().nullable(),
    submittedAt: p.datetime().onCreate(() => new Date()),
    finishedAt: p.datetime().nullable(),
  },
});

export type Batch = InferEntity<typeof BatchSchema>;
