import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, constants, rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import type { ProblemCode } from '../../api/problems.ts';
import type { ExportStatusView } from '../../services/exports/status.ts';
import type { JobDetailExtras } from '../../services/jobs/presenters.ts';
import { clientOf, entityId, uuid } from '../arguments.ts';
import type { ApiClient } from '../client.ts';
import { CliError, EXIT } from '../errors.ts';
import { printJson, say } from '../output.ts';
import { jobSettled, pollUntil } from '../poll.ts';
import { formatBytes, startProgress } from '../progress.ts';

/** The export is gone or will never have a file: the command failed, the server did not. */
const EXPORT_FAILURES: readonly ProblemCode[] = ['ExportExpired', 'ExportNotReady'];

/** GET /api/v2/export/{id}/detail. */
type ExportDetail = ExportStatusView & JobDetailExtras;

interface ExportOptions {
  all?: boolean;
  out: string;
  from?: string;
}

export function registerExportCommands(program: Command): void {
  const exportCommand = program.command('export').description('export records to an XML file: start, wait, download and verify');

  exportCommand
    .command('snapshot')
    .description('the current form of the given records (or of all of them) as an entities document')
    .argument('[ids...]', 'entity numbers or UUIDs', collectIds)
    .option('--all', 'every record')
    .requiredOption('--out <file>', 'where to write the export file')
    .action(async (ids: string[] | undefined, options: ExportOptions, command: Command) => {
      await runExport(command, 'snapshots', requestedIds(command, ids, options), '', options.out);
    });

  exportCommand
    .command('revisions')
    .description('the changes of the given records (or of all of them) after a transaction as an entityRecordRevisions document')
    .requiredOption('--from <transId>', 'changes after this transaction', uuid)
    .argument('[ids...]', 'entity numbers or UUIDs', collectIds)
    .option('--all', 'every record')
    .requiredOption('--out <file>', 'where to write the export file')
    .action(async (ids: string[] | undefined, options: ExportOptions, command: Command) => {
      const query = `?${new URLSearchParams({ fromTransId: options.from! })}`;
      await runExport(command, 'revisions', requestedIds(command, ids, options), query, options.out);
    });
}

function collectIds(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), entityId(value)];
}

/** The start body as the real interface has it: entity refs as strings; empty (with --all) means every record. */
function requestedIds(command: Command, ids: string[] | undefined, options: ExportOptions): string[] {
  const given = ids ?? [];
  if (options.all === true && given.length > 0) command.error('error: give entity ids or --all, not both');
  if (options.all !== true && given.length === 0) command.error('error: give entity ids, or --all for every record');
  return given;
}

async function runExport(command: Command, kind: 'snapshots' | 'revisions', ids: string[], query: string, out: string): Promise<void> {
  const target = resolve(out);
  await access(dirname(target), constants.W_OK).catch(() => {
    throw new CliError(EXIT.usage, `cannot write ${out}: ${dirname(target)} is not a writable directory`);
  });
  const client = clientOf(command);
  const id = (
    await client.text(`/api/v2/export/${kind}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ids),
    })
  ).trim();
  say(`export ${id} started`);
  const status = await waitForExport(client, id, ids.length);
  if (status.status !== 'COMPLETED')
    throw new CliError(EXIT.failed, `export ${id} ${status.status}${status.error ? `: ${status.error}` : ''}`);
  if (status.missing.length > 0)
    say(
      `${status.missing.length} requested records do not exist: ${status.missing.slice(0, 10).join(', ')}${status.missing.length > 10 ? ', ...' : ''}`,
    );
  const sha256 = await download(client, status, target);
  say(
    `export ${id}: ${status.entitiesWritten} records, ${formatBytes(status.bytes)} written to ${out}${sha256 ? ' (SHA-256 verified)' : ''}`,
  );
  await printJson({ ...status, file: target });
}

/** Polls the status; the bar counts records written, against the number requested when there is one. */
async function waitForExport(client: ApiClient, id: string, requested: number): Promise<ExportDetail> {
  const progress =
    requested > 0
      ? startProgress('export |{bar}| {value}/{total} records | {status}', requested, { status: 'PENDING' })
      : startProgress('export {value} records | {status}', 0, { status: 'PENDING' });
  try {
    return await pollUntil(
      () => client.json<ExportDetail>(`/api/v2/export/${id}/detail`),
      jobSettled(),
      (status) => progress.update(status.entitiesWritten, { status: status.state }),
    );
  } finally {
    progress.stop();
  }
}

/**
 * Streams the file to `<target>.part` while hashing it, checks the SHA-256
 * the server sent (header, else status) and only then renames it into place.
 * Returns the verified hash, or undefined when the server gave none.
 */
async function download(client: ApiClient, status: ExportStatusView, target: string): Promise<string | undefined> {
  const response = await client.request(`/api/v2/export/download/${status.id}`, {
    headers: { 'accept-encoding': 'identity' },
    failures: EXPORT_FAILURES,
  });
  const expected = (response.headers.get('x-content-sha256') ?? status.sha256 ?? undefined)?.toLowerCase();
  const size = Number(response.headers.get('content-length') ?? status.bytes);
  const partial = `${target}.part`;
  const hash = createHash('sha256');
  const progress = startProgress('download |{bar}| {percentage}% | {done} of {size}', size, {
    done: formatBytes(0),
    size: formatBytes(size),
  });
  let received = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      received += chunk.length;
      progress.update(received, { done: formatBytes(received) });
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body as ReadableStream<Uint8Array>), meter, createWriteStream(partial));
  } catch (error) {
    await rm(partial, { force: true });
    throw new CliError(
      EXIT.server,
      `download of export ${status.id} broke off after ${formatBytes(received)}: ${(error as Error).message}`,
    );
  } finally {
    progress.stop();
  }
  const actual = hash.digest('hex');
  if (expected !== undefined && actual !== expected) {
    await rm(partial, { force: true });
    throw new CliError(
      EXIT.failed,
      `export ${status.id}: the downloaded file's SHA-256 is ${actual}, the server announced ${expected}; nothing was written`,
    );
  }
  await rename(partial, target);
  return expected;
}
