import pg from 'pg';
import { to as copyTo, type CopyToStreamQuery } from 'pg-copy-streams';
import { streamPages } from './cursor.ts';
import { splitRefs } from './entity-refs.ts';
import { fromStoredChanges, OMITTED_CREATED_PARTS_SQL, type StoredChanges } from './revision-changes.ts';
import type { EntityRecord, EntityRef, Part, RevisionChanges } from '../domain/model.ts';
import { entityOpenings } from '../domain/xml/entity-writer.ts';

// The two reads behind every export (snapshot and revisions), through a
// server-side cursor a page (one cursor read) at a time, so memory stays flat
// whatever the number of records.

export interface ExportRecords {
  /**
   * The current form of the named records that exist (every record when
   * `refs` is empty), in entityId order, each once; refs that name nothing
   * are skipped. With `onSnapshot`, told the read's snapshot point first.
   */
  currentRecordPages(refs: readonly EntityRef[], rowsPerRead?: number, onSnapshot?: SnapshotListener): AsyncGenerator<EntityRecord[]>;
  /**
   * The same records as the snapshot export writes them, as UTF-8 bytes
   * through one binary COPY: each record's element of an entities document
   * (v2), cut by PostgreSQL from its stored document (its opening replaced,
   * entityOpenings), or, where no document of that form is stored, its JSON
   * text (the first byte tells which: `<` or `{`). A page is what one read of
   * the socket brought. Bytes wait outside V8's heap, so pages read ahead
   * cost no young-generation collection anything; the reader makes a record
   * a string only when it writes it.
   */
  currentSnapshotBytes(refs: readonly EntityRef[], onSnapshot: SnapshotListener): AsyncGenerator<RecordTexts>;
  /**
   * The same records for an EAC-CPF export, in the same form: each record's
   * stored EAC-CPF element with its context's marks (entity.eac_cpf,
   * domain/eac-cpf/stored.ts), or, where none is stored, its JSON text (`<`
   * or `{` first).
   */
  currentEacCpfBytes(refs: readonly EntityRef[], onSnapshot: SnapshotListener): AsyncGenerator<RecordTexts>;
  /**
   * The change set of every revision of the transactions committed after the
   * one whose commit_seq is `fromCommitSeq`, in commit order (entityId order
   * inside one transaction). An empty `refs` means every entity.
   */
  revisionChangePages(
    fromCommitSeq: string,
    refs: readonly EntityRef[],
    rowsPerRead: number | undefined,
    onSnapshot: SnapshotListener,
  ): AsyncGenerator<RevisionChanges[]>;
}

/**
 * Told, before the first row, the UUID of the last transaction committed in
 * the read's snapshot. Transactions become visible in commit_seq order (the
 * commit-order trigger draws it under a lock held until the commit is
 * visible), so the snapshot holds exactly the transactions up to this one.
 */
type SnapshotListener = (upToTransId: string) => void;

const LAST_COMMITTED = 'select uuid from transaction where commit_seq is not null order by commit_seq desc limit 1';

async function readLastCommitted(client: pg.PoolClient, onSnapshot: SnapshotListener): Promise<void> {
  const { rows } = await client.query<{ uuid: string }>(LAST_COMMITTED);
  // The genesis transaction is a real row: there is always one.
  onSnapshot(rows[0]!.uuid);
}

/** Records' JSON texts as UTF-8 bytes, one after the other: record i is bytes[starts[i], ends[i]). */
export interface RecordTexts {
  bytes: Buffer;
  starts: number[];
  ends: number[];
}

interface RevisionRow {
  uuid: string;
  batch_id: string;
  changes: StoredChanges;
  omitted_parts: Part[] | null;
}

export function exportRecordsOver(pool: pg.Pool): ExportRecords {
  async function* currentRecords(
    refs: readonly EntityRef[],
    rowsPerRead?: number,
    onSnapshot?: SnapshotListener,
  ): AsyncGenerator<string[]> {
    const { ids, uuids } = splitRefs(refs);
    const inSnapshot = onSnapshot && ((client: pg.PoolClient) => readLastCommitted(client, onSnapshot));
    const pages =
      refs.length === 0
        ? streamPages<{ record: string }>(pool, 'select record::text as record from entity order by id', [], rowsPerRead, inSnapshot)
        : streamPages<{ record: string }>(
            pool,
            'select record::text as record from entity where id = any($1::bigint[]) or uuid = any($2::uuid[]) order by id',
            [ids, uuids],
            rowsPerRead,
            inSnapshot,
          );
    for await (const rows of pages) yield rows.map((row) => row.record);
  }

  /** One bytea `element` of each record named (every record when `refs` is empty), in id order, through binary COPY. */
  function snapshotBytes(refs: readonly EntityRef[], element: string, onSnapshot: SnapshotListener): AsyncGenerator<RecordTexts> {
    const { ids, uuids } = splitRefs(refs);
    // COPY takes no parameters: the references go in as literals (ids are digits, UUIDs checked by the API; quoted anyway).
    const filter = refs.length === 0 ? '' : `where id = any(${arrayLiteral(ids)}::bigint[]) or uuid = any(${arrayLiteral(uuids)}::uuid[])`;
    const queries =
      refs.length === 0
        ? (client: pg.PoolClient) => wholeSnapshotQueries(client, element)
        : async () => [`select ${element} from entity ${filter} order by id`];
    return copyOutTexts(pool, queries, (client) => readLastCommitted(client, onSnapshot));
  }

  return {
    async *currentRecordPages(refs, rowsPerRead, onSnapshot) {
      for await (const texts of currentRecords(refs, rowsPerRead, onSnapshot)) yield texts.map((text) => JSON.parse(text) as EntityRecord);
    },

    currentSnapshotBytes(refs, onSnapshot) {
      // The stored document (its bytes one character a byte, db/document-bytes.ts) back to bytes, its opening the element's.
      const opening = entityOpenings('v2');
      const element = `case when starts_with(document_bytes, ${pg.escapeLiteral(opening.document)})
        then convert_to(${pg.escapeLiteral(opening.element)} || substr(document_bytes, ${opening.document.length + 1}), 'LATIN1')
        else convert_to(record::text, 'UTF8') end`;
      return snapshotBytes(refs, element, onSnapshot);
    },

    currentEacCpfBytes(refs, onSnapshot) {
      return snapshotBytes(refs, `coalesce(convert_to(eac_cpf, 'LATIN1'), convert_to(record::text, 'UTF8'))`, onSnapshot);
    },

    async *revisionChangePages(fromCommitSeq, refs, rowsPerRead, onSnapshot) {
      const { ids, uuids } = splitRefs(refs);
      const filter =
        refs.length === 0 ? '' : 'and r.entity_id in (select id from entity where id = any($2::bigint[]) or uuid = any($3::uuid[]))';
      const pages = streamPages<RevisionRow>(
        pool,
        `select r.uuid, r.batch_id, r.changes, ${OMITTED_CREATED_PARTS_SQL} as omitted_parts
           from transaction t join revision r on r.seq = t.seq
          where t.commit_seq > $1 ${filter} order by t.commit_seq, r.entity_id, r.uuid`,
        refs.length === 0 ? [fromCommitSeq] : [fromCommitSeq, ids, uuids],
        rowsPerRead,
        (client) => readLastCommitted(client, onSnapshot),
      );
      for await (const rows of pages) {
        yield rows.map((row) => {
          const changes = fromStoredChanges(row.changes, row.omitted_parts);
          return { ...changes, batchId: changes.batchId ?? row.batch_id, revisionUuid: row.uuid };
        });
      }
    },
  };
}

/**
 * Record numbers per COPY of a whole snapshot. Each COPY reads one range of
 * the primary key in its order: a bounded range is estimated small, with
 * statistics or without, so it is planned as an index scan; one COPY of every
 * record in id order planned without statistics is a sequential scan and a
 * sort of every document on disk before the first byte.
 */
const SNAPSHOT_IDS_PER_COPY = 100_000;

/** The COPY queries of every record, range by range of the primary key, in id order. */
async function wholeSnapshotQueries(client: pg.PoolClient, element: string): Promise<string[]> {
  const { rows } = await client.query<{ lo: string | null; hi: string | null }>('select min(id) as lo, max(id) as hi from entity');
  const queries: string[] = [];
  if (rows[0]!.lo === null) return [`select ${element} from entity where false`];
  for (let lo = Number(rows[0]!.lo); lo <= Number(rows[0]!.hi); lo += SNAPSHOT_IDS_PER_COPY)
    queries.push(`select ${element} from entity where id >= ${lo} and id < ${lo + SNAPSHOT_IDS_PER_COPY} order by id`);
  return queries;
}

/** An array value as one SQL literal, every element quoted. */
function arrayLiteral(values: readonly string[]): string {
  return pg.escapeLiteral(`{${values.map((value) => `"${value.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`);
}

/** Binary COPY's header: signature, flags, length of the header extension (then the extension). */
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const COPY_HEADER_BYTES = COPY_SIGNATURE.length + 8;
/**
 * Chunks of COPY data (each one read of the socket, at most 64 KB) read ahead
 * of the reader. Kept as chunks (object mode): a byte stream joins what it
 * holds into one new buffer at every read, a copy of every byte.
 */
const COPY_CHUNKS_AHEAD = 16;

/**
 * The one text column of every row of `query`, through `COPY … TO STDOUT
 * (FORMAT binary)`, as its bytes, a page per chunk of COPY data. The COPY waits while the reader does (the
 * socket is not read): memory stays flat. Stopping early drops the
 * connection, which ends the COPY on the server.
 */
async function* copyOutTexts(
  pool: pg.Pool,
  queries: (client: pg.PoolClient) => Promise<readonly string[]>,
  inSnapshot: (client: pg.PoolClient) => Promise<void>,
): AsyncGenerator<RecordTexts> {
  const client = await pool.connect();
  let stream: CopyToStreamQuery | undefined;
  let complete = false;
  try {
    // One snapshot for what inSnapshot reads and every row of the COPY.
    await client.query('begin isolation level repeatable read read only');
    await inSnapshot(client);
    for (const query of await queries(client)) {
      stream = client.query(copyTo(`copy (${query}) to stdout (format binary)`, { objectMode: true, highWaterMark: COPY_CHUNKS_AHEAD }));
      yield* binaryCopyTexts(stream);
      stream = undefined;
    }
    await client.query('commit');
    complete = true;
  } finally {
    // A connection left inside a COPY or a transaction is closed, not returned (its later failure is expected).
    if (!complete && stream) {
      stream.on('error', () => undefined);
      stream.destroy();
    }
    client.release(!complete);
  }
}

/**
 * The rows of binary COPY data of one non-null column, however the data is
 * cut into chunks: a page per chunk (a row that began in an earlier chunk
 * comes first, on its own, copied out of the two).
 */
export async function* binaryCopyTexts(chunks: AsyncIterable<Buffer>): AsyncGenerator<RecordTexts> {
  let rest: Buffer | undefined;
  let headerRead = false;
  let trailerRead = false;
  for await (const chunk of chunks) {
    let bytes = chunk;
    if (rest !== undefined) {
      // Only the bytes of the row begun in an earlier chunk are copied, not the whole chunk.
      const length = headerRead && rest.length >= 6 && rest.readInt16BE(0) === 1 ? rest.readInt32BE(2) : -1;
      const missing = length < 0 ? Infinity : 6 + length - rest.length;
      if (missing > chunk.length) {
        bytes = Buffer.concat([rest, chunk]);
      } else {
        const row = Buffer.concat([rest, chunk.subarray(0, missing)]);
        yield { bytes: row, starts: [6], ends: [row.length] };
        bytes = chunk.subarray(missing);
      }
    }
    let offset = 0;
    if (!headerRead) {
      if (bytes.length < COPY_HEADER_BYTES || bytes.length < COPY_HEADER_BYTES + bytes.readInt32BE(COPY_HEADER_BYTES - 4)) {
        rest = bytes;
        continue;
      }
      if (!bytes.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE)) throw new Error('COPY: not a binary COPY header');
      offset = COPY_HEADER_BYTES + bytes.readInt32BE(COPY_HEADER_BYTES - 4);
      headerRead = true;
    }
    const starts: number[] = [];
    const ends: number[] = [];
    // A row: int16 field count (1), int32 length, the bytes; the trailer: int16 -1.
    while (offset + 2 <= bytes.length && !trailerRead) {
      const fields = bytes.readInt16BE(offset);
      if (fields === -1) {
        trailerRead = true;
        offset += 2;
        break;
      }
      if (offset + 6 > bytes.length) break;
      const length = bytes.readInt32BE(offset + 2);
      if (fields !== 1 || length < 0) throw new Error(`COPY: a row of ${fields} fields, the first ${length} bytes long`);
      const end = offset + 6 + length;
      if (end > bytes.length) break;
      starts.push(offset + 6);
      ends.push(end);
      offset = end;
    }
    rest = offset < bytes.length ? bytes.subarray(offset) : undefined;
    if (starts.length > 0) yield { bytes, starts, ends };
  }
  if (!headerRead || !trailerRead || rest !== undefined) throw new Error('COPY: the data ended inside a row');
}
