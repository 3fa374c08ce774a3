import type { Command } from 'commander';
import type { ProblemCode } from '../../api/problems.ts';
import type { BatchDetailView } from '../../services/batches/status.ts';
import { clientOf, readInputFile, uuid } from '../arguments.ts';
import { describeResult, summarizeResult } from '../batch-result.ts';
import type { ApiClient } from '../client.ts';
import { CliError, EXIT } from '../errors.ts';
import { printJson, printResult, say } from '../output.ts';
import { jobSettled, pollUntil } from '../poll.ts';
import { startProgress, type Progress } from '../progress.ts';

/** Answers that refuse the batch itself: the command failed (exit 1), the server did not. */
const REFUSED: readonly ProblemCode[] = ['InvalidXml', 'SchemaViolation', 'BatchAlreadyExists', 'TooManyChanges', 'PayloadTooLarge'];

export function registerBatchCommands(program: Command): void {
  const batch = program.command('batch').description('submit change batches and follow them');

  batch
    .command('submit')
    .description('submit a batch (POST /api/v2/batches); prints its id, or with --wait its result')
    .argument('<file>', 'batch XML file')
    .option('--wait', 'wait for the batch to finish, print its result XML and exit 1 if it failed')
    .option('--force', "write despite warnings (needs the 'force' permission)")
    .option('--force-key <key>', 'write despite the warnings a failed attempt reported, with the key it gave')
    .action(async (file: string, options: { wait?: boolean; force?: boolean; forceKey?: string }, command: Command) => {
      const client = clientOf(command);
      const body = await readInputFile(file);
      const query = new URLSearchParams();
      if (options.force) query.set('force', 'true');
      if (options.forceKey !== undefined) query.set('forceKey', options.forceKey);
      const updateRequestId = await client.json<string>(`/api/v2/batches${query.size > 0 ? `?${query}` : ''}`, {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body,
        failures: REFUSED,
      });
      if (!options.wait) {
        await printResult(updateRequestId);
        return;
      }
      say(`batch ${updateRequestId} accepted; waiting for it to finish`);
      const status = await waitForBatch(client, updateRequestId);
      await printOutcome(client, status);
    });

  batch
    .command('status')
    .description('print the processing state of a batch as JSON, with its counts and times (GET /api/v2/batches/{id}/detail)')
    .argument('<id>', 'update request id (the batch UUID)', uuid)
    .action(async (id: string, _options: unknown, command: Command) => {
      await printJson(await clientOf(command).json<BatchDetailView>(`/api/v2/batches/${id}/detail`));
    });

  batch
    .command('result')
    .description('print the result XML of a finished batch; exit 1 if the batch failed')
    .argument('<id>', 'update request id (the batch UUID)', uuid)
    .action(async (id: string, _options: unknown, command: Command) => {
      const xml = await clientOf(command).text(`/api/v2/batches/${id}/result`);
      await printResult(xml);
      reportResult(`batch ${id}`, xml);
    });

  batch
    .command('test')
    .description('validate and process a batch without writing anything (POST /api/v2/batches/test)')
    .argument('<file>', 'batch XML file')
    .action(async (file: string, _options: unknown, command: Command) => {
      const body = await readInputFile(file);
      const xml = await clientOf(command).text('/api/v2/batches/test', {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body,
        failures: REFUSED,
      });
      await printResult(xml);
      reportResult('test batch', xml, { test: true });
    });
}

async function waitForBatch(client: ApiClient, id: string): Promise<BatchDetailView> {
  // Started on the first status read, which knows the number of changes.
  let progress: Progress | undefined;
  try {
    return await pollUntil(
      () => client.json<BatchDetailView>(`/api/v2/batches/${id}/detail`),
      jobSettled(),
      (status) => {
        progress ??= startProgress('batch |{bar}| {percentage}% | {value}/{total} changes | {status}', status.changesTotal ?? 0, {
          status: status.status,
        });
        if (status.changesTotal !== null) progress.setTotal(status.changesTotal);
        progress.update(status.changesApplied, { status: status.status });
      },
    );
  } finally {
    progress?.stop();
  }
}

async function printOutcome(client: ApiClient, status: BatchDetailView): Promise<void> {
  const xml = await client.text(`/api/v2/batches/${status.updateRequestId}/result`);
  await printResult(xml);
  reportResult(`batch ${status.updateRequestId}`, xml);
}

/** One summary line on stderr; a failed batch ends the command with exit 1. */
function reportResult(what: string, xml: string, { test = false } = {}): void {
  const summary = summarizeResult(xml);
  const text = describeResult(summary, test);
  if (!summary.failed) {
    say(`${what} ${test ? 'passed' : 'COMPLETED'}: ${text}`);
    return;
  }
  const hint = summary.forceKey
    ? `\nto write it despite its warnings, submit it ${test ? '' : 'again '}with --force-key ${summary.forceKey}`
    : '';
  throw new CliError(EXIT.failed, `${what} FAILED: ${text}${hint}`);
}
