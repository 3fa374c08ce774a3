import { ServiceError } from '../errors.ts';
import type { ExportFileStore, StoredFile } from './files.ts';
import type { ExportState } from '../../db/exports.ts';
import { effectiveStatus } from './status.ts';

export interface ExportDownload {
  row: ExportState;
  file: StoredFile;
  /** SHA-256 of the file, hex. */
  sha256: string;
  filename: string;
}

/**
 * The finished file of export `row` (the row as its status shows it,
 * services/jobs/view.ts), opened. An export that has not finished is 409
 * ExportNotReady; a FAILED one is 409 too (its state, not its age, is the
 * conflict: the status names the error and no file will ever come); an
 * expired (or vanished) file is 410 ExportExpired.
 */
export async function openExportDownload(store: ExportFileStore, row: ExportState): Promise<ExportDownload> {
  const id = row.id;
  const status = effectiveStatus(row);
  if (status === 'ACCEPTED' || status === 'RUNNING') throw new ServiceError('ExportNotReady', `export ${id} is ${status}; poll its status`);
  if (status === 'FAILED') {
    throw new ServiceError('ExportNotReady', `export ${id} FAILED and has no file; start a new export`, [
      { message: row.error ?? 'the export failed' },
    ]);
  }
  const gone = () =>
    new ServiceError(
      'ExportExpired',
      `the file of export ${id} expired${row.expiresAt ? ` at ${new Date(row.expiresAt).toISOString()}` : ''} and was deleted`,
    );
  if (status === 'EXPIRED' || row.filePath === null || row.sha256 === null) throw gone();
  const file = await store.open(row.filePath);
  if (!file) throw gone();
  const format = row.format === 'eac-cpf' ? '-eac-cpf' : '';
  return { row, file, sha256: row.sha256, filename: `${row.kind}${format}-${row.id}.xml` };
}
