import { createHash } from 'node:crypto';
import type { ExportRecords, RecordTexts } from '../../db/export-records.ts';
import { storedEacCpfFiller } from '../../domain/eac-cpf/stored.ts';
import { eacCpfCollection } from '../../domain/eac-cpf/writer.ts';
import type { EntityRecord, EntityRef, RevisionChanges } from '../../domain/model.ts';
import { byteStringElementWriter } from '../../domain/xml/compiled-entity-writer.ts';
import { entitiesDocument, revisionsDocument } from '../../domain/xml/index.ts';
import type { ExportFileStore, ExportFileWriter } from './files.ts';
import { idFilter, type RequestedId } from './ids.ts';
import { readAhead } from './read-ahead.ts';
import type { ExportRow } from '../../db/exports.ts';

// The export itself: rows from PostgreSQL (the snapshot's by one COPY, the
// revisions' from a server-side cursor), through the streaming XML writer and
// onto a temporary file, hashed on the way. Memory holds a few pages and two
// write buffers, whatever the number of records.

/** An export still to be written: its ids are there (they are dropped only once it ended). Without a format, v2. */
export type ExportJob = Pick<ExportRow, 'id' | 'kind' | 'fromSeq'> &
  Partial<Pick<ExportRow, 'format' | 'formatContext'>> & { requestedIds: RequestedId[] };

interface ExportProgress {
  entitiesWritten: number;
  bytes: number;
}

export interface WriteExportOptions {
  /** Attempt number of the activity; names the temporary file. */
  attempt: number;
  /** Records between two calls of onStep (each preceded by a flush to the file). */
  recordsPerStep?: number;
  onStep?: (progress: ExportProgress) => Promise<void>;
  /** Rows fetched per cursor read (the revisions export; the snapshot reads by one COPY). */
  rowsPerRead?: number;
}

export interface ExportFileSummary extends ExportProgress {
  fileKey: string;
  sha256: string;
  /** The last committed transaction the records were read as of (the read's snapshot includes it and every one before). */
  upToTransId: string;
}

const RECORDS_PER_STEP = 5000;
/** Rows per cursor read (the revisions export; the snapshot reads by COPY). */
const ROWS_PER_READ = 250;
/**
 * Pages read ahead of the writer: cursor pages of revisions, or chunks of
 * the snapshot's COPY data (bytes outside V8's heap: records made strings
 * while they waited here outlived V8's young generation, 8 MB semi-spaces in
 * the worker, and cost a fifth more CPU).
 */
const PAGES_AHEAD = 4;
/** Bytes collected before a write: large writes, bounded memory. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

export async function writeExportFile(
  records: ExportRecords,
  store: ExportFileStore,
  job: ExportJob,
  options: WriteExportOptions,
): Promise<ExportFileSummary> {
  const rowsPerRead = options.rowsPerRead ?? ROWS_PER_READ;
  const refs = requestedRefs(job.requestedIds);
  let upToTransId: string | undefined;
  const onSnapshot = (id: string) => {
    upToTransId = id;
  };
  let written: Omit<ExportFileSummary, 'upToTransId'>;
  if (job.kind === 'revisions')
    written = await writeRevisionsDocument(
      records.revisionChangePages(job.fromSeq ?? '0', refs, rowsPerRead, onSnapshot),
      store,
      job,
      options,
    );
  else if (job.format === 'eac-cpf')
    written = await writeDocument(eacCpfSnapshotDocument(job), records.currentEacCpfBytes(refs, onSnapshot), store, job, options);
  else written = await writeDocument(snapshotDocument(), records.currentSnapshotBytes(refs, onSnapshot), store, job, options);
  // Both reads name their snapshot before their first row, so the file's end implies it.
  if (upToTransId === undefined) throw new Error(`export ${job.id} was read without a snapshot point`);
  return { ...written, upToTransId };
}

function writeRevisionsDocument(
  pages: AsyncIterable<RevisionChanges[]>,
  store: ExportFileStore,
  job: ExportJob,
  options: WriteExportOptions,
) {
  const revisions = revisionsDocument('v2');
  return writeDocument(
    { ...revisions, elementEncoding: 'utf8', count: (page) => page.length, element: (page, index) => revisions.element(page[index]!) },
    pages,
    store,
    job,
    options,
  );
}

/**
 * The snapshot's entities over records read as bytes
 * (ExportRecords.currentSnapshotBytes), each made a byte string (UTF-8
 * bytes one per character, their Latin-1 decoding) and written in that form:
 * the bytes go to the file as they came, with no UTF-8 decoding or encoding
 * on the way. An element cut from the stored document is written as it is;
 * a record's JSON is parsed and written (byteStringElementWriter).
 */
function snapshotDocument(): DocumentParts<RecordTexts> {
  const { opening, closing } = entitiesDocument('v2');
  const element = byteStringElementWriter('v2');
  return {
    opening,
    elementEncoding: 'latin1',
    count: (page) => page.starts.length,
    element: (page, index) => {
      const bytes = page.bytes.toString('latin1', page.starts[index], page.ends[index]);
      return bytes.charCodeAt(0) === LESS_THAN ? bytes : element(bytes);
    },
    closing,
  };
}

/**
 * The snapshot in EAC-CPF 2.0 (domain/eac-cpf) over records read as bytes
 * (ExportRecords.currentEacCpfBytes), written as byte strings like the
 * native snapshot: a stored element gets the export's origin and agency put
 * in (domain/eac-cpf/stored.ts); a record stored without one is parsed from
 * its JSON and written.
 */
function eacCpfSnapshotDocument(job: ExportJob): DocumentParts<RecordTexts> {
  const formatContext = job.formatContext;
  const context = { origin: formatContext?.origin, agencyName: formatContext?.agencyName ?? DEFAULT_AGENCY };
  const { opening, element, closing } = eacCpfCollection(context);
  const fill = storedEacCpfFiller(context);
  return {
    opening,
    elementEncoding: 'latin1',
    count: (page) => page.starts.length,
    element: (page, index) => {
      if (page.bytes[page.starts[index]!] === LESS_THAN) return fill(page.bytes.toString('latin1', page.starts[index], page.ends[index]));
      const record = JSON.parse(page.bytes.toString('utf8', page.starts[index], page.ends[index])) as EntityRecord;
      return Buffer.from(element(record), 'utf8').toString('latin1');
    },
    closing,
  };
}

/** The agency of an EAC-CPF export stored without its context. */
const DEFAULT_AGENCY = 'Entity Records Service';

/** `<`: how an element cut from a stored document begins (a record's JSON begins `{`). */
const LESS_THAN = 0x3c;

/** A document over pages of rows. */
interface DocumentParts<Page> {
  opening: string;
  count: (page: Page) => number;
  /** The element of a page's row; undefined when the row has nothing to say in this document. */
  element: (page: Page, index: number) => string | undefined;
  /** How elements become bytes: 'latin1' for byte strings. */
  elementEncoding: OutputEncoding;
  closing: string;
}

type OutputEncoding = 'utf8' | 'latin1';

async function writeDocument<Page>(
  document: DocumentParts<Page>,
  pages: AsyncIterable<Page>,
  store: ExportFileStore,
  job: ExportJob,
  options: WriteExportOptions,
): Promise<Omit<ExportFileSummary, 'upToTransId'>> {
  const recordsPerStep = options.recordsPerStep ?? RECORDS_PER_STEP;
  const file = await store.create(job.id, options.attempt);
  const out = new HashedOutput(file);
  let written = 0;
  let lastStep = 0;
  /** Everything written so far reaches the file before it is reported. */
  const step = async () => {
    await out.drain();
    await options.onStep?.({ entitiesWritten: written, bytes: out.bytes });
    return written;
  };

  try {
    await out.write(document.opening);
    // Pages are read ahead, so PostgreSQL works while this one is written; several, so
    // that a moment without CPU for one side (a shared machine) does not stall the other.
    for await (const page of readAhead(pages, PAGES_AHEAD)) {
      for (let index = 0, count = document.count(page); index < count; index += 1) {
        const element = document.element(page, index);
        if (element === undefined) continue;
        if (written - lastStep >= recordsPerStep) lastStep = await step();
        if (!out.add(element, document.elementEncoding)) await out.write(element, document.elementEncoding);
        written += 1;
      }
    }
    if (written - lastStep >= recordsPerStep) await step();
    await out.write(document.closing);
    await out.drain();
    const fileKey = await file.commit();
    return { fileKey, entitiesWritten: written, bytes: out.bytes, sha256: out.sha256() };
  } catch (error) {
    // Leaving the loop early has already closed the cursor (for await calls return()).
    await out.settle().catch(() => undefined);
    await file.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * Encodes text straight into a reused buffer, hashes it and writes it when
 * full: no joined strings, no buffer per chunk. Two buffers take turns, so
 * that the next one fills while the file takes the last (one write in flight
 * at a time, so the file gets them in order): waiting for the file was a
 * quarter of the export's time on a loaded machine.
 */
class HashedOutput {
  private readonly file: ExportFileWriter;
  private buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private spare = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private readonly hash = createHash('sha256');
  private used = 0;
  /** The write in flight, if any. */
  private writing: Promise<void> | undefined;
  /** Bytes handed to the file so far. */
  bytes = 0;

  constructor(file: ExportFileWriter) {
    this.file = file;
  }

  /** Adds text to the buffer when it fits without a write first; false when it needs write(). */
  add(text: string, encoding: OutputEncoding = 'utf8'): boolean {
    if (this.used + maxBytes(text, encoding) > this.buffer.length) return false;
    this.used += this.buffer.write(text, this.used, encoding);
    return true;
  }

  async write(text: string, encoding: OutputEncoding = 'utf8'): Promise<void> {
    const most = maxBytes(text, encoding);
    if (this.used + most > this.buffer.length) await this.flush();
    if (most > this.buffer.length) {
      await this.emit(Buffer.from(text, encoding));
      return;
    }
    this.add(text, encoding);
  }

  /** Starts writing what the buffer holds; the other buffer takes the text that follows. */
  async flush(): Promise<void> {
    if (this.used === 0) return;
    const filled = this.buffer.subarray(0, this.used);
    [this.buffer, this.spare] = [this.spare, this.buffer];
    this.used = 0;
    await this.emit(filled);
  }

  /** Everything added so far is in the file. */
  async drain(): Promise<void> {
    await this.flush();
    await this.settle();
  }

  /** Waits for the write in flight; throws its failure. */
  async settle(): Promise<void> {
    const writing = this.writing;
    this.writing = undefined;
    await writing;
  }

  sha256(): string {
    return this.hash.digest('hex');
  }

  /** Hashes `bytes` and writes them once the write before is done; `bytes` must stay untouched until the next emit or settle. */
  private async emit(bytes: Buffer): Promise<void> {
    this.hash.update(bytes);
    this.bytes += bytes.length;
    await this.settle();
    const writing = this.file.write(bytes);
    // Its failure is thrown by the next emit or settle; until then it is not unhandled.
    writing.catch(() => undefined);
    this.writing = writing;
  }
}

/** The most bytes `text` can take: a UTF-16 code unit never takes more than three in UTF-8, a byte string's character one. */
function maxBytes(text: string, encoding: OutputEncoding): number {
  return encoding === 'latin1' ? text.length : text.length * 3;
}

/** Entity references of the requested identifiers (the API has checked each is a number or a UUID). */
function requestedRefs(requested: readonly RequestedId[]): EntityRef[] {
  const filter = idFilter(requested);
  return [...filter.entityIds.map((id) => ({ entityId: Number(id) })), ...filter.entityUuids.map((uuid) => ({ entityUuid: uuid }))];
}
