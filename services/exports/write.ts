import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { EntityRef } from '../../domain/model.ts';
import { writeEntities, writeRevisions } from '../../domain/xml/index.ts';
import type { ExportFileStore, ExportFileWriter } from './files.ts';
import { idFilter, type RequestedId } from './ids.ts';
import { streamCurrentRecords, streamRevisionChanges } from '../reads/exports-stream.ts';
import { readAhead } from './read-ahead.ts';
import type { ExportRow } from './requests.ts';

// The export itself: rows from a server-side cursor, through the streaming
// XML writer, onto a temporary file, hashed on the way. Memory holds two
// cursor pages and one write buffer, whatever the number of records.

export type ExportJob = Pick<ExportRow, 'id' | 'kind' | 'requestedIds' | 'fromSeq'>;

export interface ExportProgress {
  entitiesWritten: number;
  bytes: number;
}

export interface WriteExportOptions {
  /** Attempt number of the activity; names the temporary file. */
  attempt: number;
  /** Records between two calls of onStep (each preceded by a flush to the file). */
  recordsPerStep?: number;
  onStep?: (progress: ExportProgress) => Promise<void>;
  /** Rows fetched per cursor read. */
  rowsPerRead?: number;
}

export interface ExportFileSummary extends ExportProgress {
  fileKey: string;
  sha256: string;
}

const RECORDS_PER_STEP = 1000;
/**
 * Rows per cursor read. Small pages keep the parsed records short-lived (they
 * die in the young generation instead of swelling the old one); one page is
 * read ahead, so PostgreSQL works while the previous page is written.
 */
const ROWS_PER_READ = 250;
/** Bytes collected before a write: large writes, bounded memory. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

export async function writeExportFile(pool: pg.Pool, store: ExportFileStore, job: ExportJob, options: WriteExportOptions): Promise<ExportFileSummary> {
  const recordsPerStep = options.recordsPerStep ?? RECORDS_PER_STEP;
  const chunks = exportDocument(pool, job, options.rowsPerRead ?? ROWS_PER_READ);
  const file = await store.create(job.id, options.attempt);
  const out = new HashedOutput(file);
  // The writers yield the opening tags, then one chunk per record, then the
  // closing tag: once another chunk has arrived, every chunk before it but
  // the first is a whole record.
  let chunkCount = 0;
  let lastStep = 0;

  try {
    for await (const chunk of chunks) {
      const recordsBefore = Math.max(0, chunkCount - 1);
      if (recordsBefore - lastStep >= recordsPerStep) {
        await out.flush();
        lastStep = recordsBefore;
        await options.onStep?.({ entitiesWritten: recordsBefore, bytes: out.bytes });
      }
      chunkCount += 1;
      await out.write(chunk);
    }
    await out.flush();
    const fileKey = await file.commit();
    return { fileKey, entitiesWritten: Math.max(0, chunkCount - 2), bytes: out.bytes, sha256: out.sha256() };
  } catch (error) {
    // Leaving the loop early has already closed the cursor (for await calls return()).
    await file.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * Encodes text straight into one reused buffer, hashes and writes it when
 * full: no joined strings, no buffer per chunk.
 */
class HashedOutput {
  private readonly file: ExportFileWriter;
  private readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private readonly hash = createHash('sha256');
  private used = 0;
  /** Bytes handed to the file so far. */
  bytes = 0;

  constructor(file: ExportFileWriter) {
    this.file = file;
  }

  async write(text: string): Promise<void> {
    // A UTF-16 code unit never takes more than three bytes in UTF-8.
    if (this.used + text.length * 3 > this.buffer.length) await this.flush();
    if (text.length * 3 > this.buffer.length) {
      await this.emit(Buffer.from(text, 'utf8'));
      return;
    }
    this.used += this.buffer.write(text, this.used, 'utf8');
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    const filled = this.buffer.subarray(0, this.used);
    this.used = 0;
    await this.emit(filled);
  }

  sha256(): string {
    return this.hash.digest('hex');
  }

  private async emit(bytes: Buffer): Promise<void> {
    this.hash.update(bytes);
    this.bytes += bytes.length;
    await this.file.write(bytes);
  }
}

function exportDocument(pool: pg.Pool, job: ExportJob, rowsPerRead: number): AsyncGenerator<string> {
  return job.kind === 'snapshot'
    ? writeEntities(readAhead(streamCurrentRecords(pool, requestedRefs(job.requestedIds), rowsPerRead), rowsPerRead), 'v2')
    : writeRevisions(readAhead(streamRevisionChanges(pool, job.fromSeq ?? '0', requestedRefs(job.requestedIds), rowsPerRead), rowsPerRead), 'v2');
}

/** Entity references of the requested identifiers (the API has checked each is a number or a UUID). */
function requestedRefs(requested: readonly RequestedId[]): EntityRef[] {
  const filter = idFilter(requested);
  return [...filter.entityIds.map((id) => ({ entityId: Number(id) })), ...filter.entityUuids.map((uuid) => ({ entityUuid: uuid }))];
}
