// A finished export checked from end to end: the status, the download, the
// file in the export store, the v2 schema and the records it holds.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateDocument } from '../../../engine/validation/index.ts';
import type { ExportStatus } from './client.ts';
import { countElements } from './data.ts';
import { check, type ScenarioContext } from './scenario.ts';

export interface ExpectedExport {
  kind: 'snapshot' | 'revisions';
  /** The entity ids the file must hold, in file order (snapshot: by id; revisions: by transaction, then id). */
  entityIds: readonly number[];
}

export async function verifyExport(
  context: Pick<ScenarioContext, 'client' | 'stack'>,
  status: ExportStatus,
  expected: ExpectedExport,
): Promise<void> {
  const id = status.id;
  check(status.status === 'COMPLETED', `export ${id} is ${status.status} (${status.error ?? 'no error'})`);
  check(
    status.entitiesWritten === expected.entityIds.length,
    `export ${id} wrote ${status.entitiesWritten} records, expected ${expected.entityIds.length}`,
  );

  const download = await context.client.requestBytes(`/api/v2/export/download/${id}`);
  check(download.status === 200, `download of export ${id} answered ${download.status}`);
  const file = download.body;
  const sha256 = createHash('sha256').update(file).digest('hex');
  check(file.length === status.bytes, `download of export ${id} has ${file.length} bytes, the status says ${status.bytes}`);
  check(
    sha256 === status.sha256 && sha256 === download.headers.get('x-content-sha256'),
    `SHA-256 of export ${id} does not match its status or header`,
  );

  const stored = readdirSync(context.stack.exportDir).filter((name) => name.includes(id));
  check(
    stored.length === 1 && stored[0] === `${id}.xml`,
    `the export store holds ${stored.join(', ')} for export ${id}, expected only ${id}.xml`,
  );
  check(readFileSync(join(context.stack.exportDir, `${id}.xml`)).equals(file), `the stored file of export ${id} differs from the download`);

  await validateDocument(file, 'v2');
  const xml = file.toString('utf8');
  const element = expected.kind === 'snapshot' ? 'entity' : 'revision';
  check(
    countElements(xml, element) === expected.entityIds.length,
    `export ${id} holds ${countElements(xml, element)} <${element}> elements, expected ${expected.entityIds.length}`,
  );
  const pattern = expected.kind === 'snapshot' ? /<entity entityId="(\d+)"/g : /<revision revisionUuid="[^"]+" entityId="(\d+)"/g;
  const ids = [...xml.matchAll(pattern)].map((match) => Number(match[1]));
  const mismatch = ids.findIndex((value, index) => value !== expected.entityIds[index]);
  check(
    ids.length === expected.entityIds.length && mismatch === -1,
    `export ${id} lists other records than expected (first difference at #${mismatch})`,
  );
  check(
    xml.trimEnd().endsWith(expected.kind === 'snapshot' ? '</entities>' : '</entityRecordRevisions>'),
    `export ${id} does not end with its closing root tag`,
  );
}
