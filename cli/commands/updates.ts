import type { Command } from 'commander';
import { clientOf, integer, uuid } from '../arguments.ts';
import type { ApiClient } from '../client.ts';
import { CliError, EXIT } from '../errors.ts';
import { printResult, say, writeOut } from '../output.ts';
import { startProgress } from '../progress.ts';

interface UpdatesOptions {
  from: string;
  to?: string;
  pageSize: number;
}

export function registerUpdatesCommand(program: Command): void {
  program
    .command('updates')
    .description('print the records updated after a transaction as XML; with --to, every page of GET /api/v2/updates as one document')
    .requiredOption('--from <transId>', 'list updates after this transaction', uuid)
    .option('--to <transId>', 'up to and including this transaction', uuid)
    .option('--page-size <n>', 'records per request with --to', integer(1), 10_000)
    .action(async (options: UpdatesOptions, command: Command) => {
      const client = clientOf(command);
      if (options.to === undefined) await updatesFrom(client, options.from);
      else await updatesBetween(client, options.from, options.to, options.pageSize);
    });
}

async function updatesFrom(client: ApiClient, from: string): Promise<void> {
  const xml = await client.text(`/api/v2/updates/from/${from}`);
  await printResult(xml);
  // Past the server's limit the answer holds only the summary (from, to, count).
  if (!/<updates[\s>/]/.test(xml)) {
    const to = /<to>([^<]+)<\/to>/.exec(xml)?.[1];
    const count = /<count>([^<]+)<\/count>/.exec(xml)?.[1];
    say(
      `too many updates to list at once (${count ?? 'many'}); run again with --from ${from} --to ${to ?? '<transaction>'} to page through them`,
    );
  }
}

/**
 * Pages until one comes back short and prints them as one updates document:
 * the first page's prolog and root start tag, every page's entries, one end tag.
 */
async function updatesBetween(client: ApiClient, from: string, to: string, pageSize: number): Promise<void> {
  const progress = startProgress('updates {value} records | page {page}', 0, { page: 1 });
  let records = 0;
  let tail = '';
  try {
    // Pages count from 1, as on the wire.
    for (let page = 1; ; page += 1) {
      const query = new URLSearchParams({ fromTransId: from, toTransId: to, page: String(page), pageSize: String(pageSize) });
      const document = splitUpdates(await client.text(`/api/v2/updates?${query}`));
      if (page === 1) {
        await writeOut(document.head);
        tail = document.tail;
      }
      await writeOut(document.body);
      const entries = document.body.match(/<revInfo[\s/]/g)?.length ?? 0;
      records += entries;
      progress.update(records, { page });
      if (entries < pageSize) break;
    }
  } finally {
    progress.stop();
  }
  await printResult(tail);
}

function splitUpdates(xml: string): { head: string; body: string; tail: string } {
  const open = /<updates\b[^>]*?(\/?)>/.exec(xml);
  if (!open) throw new CliError(EXIT.server, 'GET /api/v2/updates answered without an updates document');
  const headEnd = open.index + open[0].length;
  if (open[1] === '/') return { head: `${xml.slice(0, headEnd - 2)}>`, body: '', tail: '</updates>' };
  const close = xml.lastIndexOf('</updates>');
  if (close < headEnd) throw new CliError(EXIT.server, 'GET /api/v2/updates answered with an unterminated updates document');
  return { head: xml.slice(0, headEnd), body: xml.slice(headEnd, close), tail: xml.slice(close) };
}
