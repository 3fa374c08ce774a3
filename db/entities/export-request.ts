import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export type ExportStatus = 'ACCEPTED' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export type ExportKind = 'snapshot' | 'revisions';
/** The file's format: the registry's own v2 XML, or EAC-CPF 2.0 (snapshots only). */
export type ExportFormat = 'v2' | 'eac-cpf';
/** What an EAC-CPF file says that the records do not: the registry's name and where its record pages are. */
export interface ExportFormatContext {
  origin: string;
  agencyName: string;
}

export const ExportRequestSchema = defineEntity({
  name: 'ExportRequest',
  tableName: 'export_request',
  properties: {
    id: p.uuid().primary(),
    kind: p.text().$type<ExportKind>(),
    format: p.text().$type<ExportFormat>().default('v2'),
    formatContext: p.json<ExportFormatContext>().nullable(),
    /** Up to EXPORT_MAX_IDS (megabytes): only the export activity reads them; NULL once the export ended. Status reads ask `requestedCount`. */
    requestedIds: p.json<Array<number | string>>().nullable(),
    requestedCount: p.integer(),
    /** A digest of kind, fromSeq and ids: an identical request while this export is recent and valid gets this export. */
    requestKey: p.text().nullable(),
    /** Revisions exports: the commit_seq of fromTransId, as decimal text (no digit lost on the way to bigint). */
    fromSeq: p.bigint('string').nullable(),
    fromTransId: p.uuid().nullable(),
    /** The last committed transaction the export's snapshot includes: where a consumer of the file follows the feed from. */
    upToTransId: p.uuid().nullable(),
    status: p.text().$type<ExportStatus>(),
    requestedBy: p.text(),
    filePath: p.text().nullable(),
    entitiesWritten: p.bigint('number').default(0),
    bytes: p.bigint('number').default(0),
    sha256: p.text().nullable(),
    missing: p.json<string[]>(),
    error: p.text().nullable(),
    /** Attempts Temporal started of the export's activity (each records its number as it starts). */
    activityAttempts: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    finishedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
  },
});

export type ExportRequest = InferEntity<typeof ExportRequestSchema>;
