import { Option, type Command } from 'commander';
import { ENTITY_STATES } from '../../domain/model.ts';
import type { SearchQuery } from '../../services/search/index.ts';
import { clientOf, integer } from '../arguments.ts';
import { copyToStdout } from '../output.ts';

interface SearchOptions {
  name?: string;
  type?: string[];
  state?: SearchQuery['state'];
  page: number;
  pageSize: number;
}

export function registerSearchCommand(program: Command): void {
  program
    .command('search')
    .description('search entities (POST /api/v2/search) and print one page of brief records as XML')
    .option('--name <text>', 'names containing this text')
    .option('--type <type...>', 'entity types (any of them)')
    .addOption(new Option('--state <state...>', 'entity states (any of them)').choices(ENTITY_STATES))
    .option('--page <n>', 'page number, from 0', integer(0), 0)
    .option('--page-size <n>', 'records per page', integer(1), 100)
    .action(async (options: SearchOptions, command: Command) => {
      const query = new URLSearchParams({ page: String(options.page), pageSize: String(options.pageSize) });
      const response = await clientOf(command).request(`/api/v2/search?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(searchBody(options)),
      });
      await copyToStdout(response);
    });
}

/** The QueryParamsDef the options describe; --name is a CT_CONTAIN condition on the `name` index. */
export function searchBody(options: Pick<SearchOptions, 'name' | 'type' | 'state'>): SearchQuery {
  const body: SearchQuery = {};
  if (options.type) body.types = options.type;
  if (options.state) body.state = options.state;
  if (options.name !== undefined) body.cond = { condType: 'index', name: 'name', comparator: 'CT_CONTAIN', value: options.name };
  return body;
}
