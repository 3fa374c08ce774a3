import { Option, type Command } from 'commander';
import { ENTITY_STATES } from '../../domain/model.ts';
import { clientOf, integer } from '../arguments.ts';
import { copyToStdout, say } from '../output.ts';

/** States as the real v2 OpenAPI names them (RecordState); the XML's ERS_* names are accepted too. */
const RECORD_STATES = ['RS_NEW', 'RS_APPROVED', 'RS_INVALID', 'RS_REPLACED'] as const;

interface SearchOptions {
  name?: string;
  type?: string[];
  state?: string[];
  page: number;
  pageSize: number;
}

/** The part of QueryParamsDef (v2) the command sends. */
interface SearchBody {
  types?: string[];
  state?: string[];
  cond?: { condType: 'INDEX'; name: 'DISPLAY_NAME'; comparator: 'CT_CONTAINS'; value: string };
}

export function registerSearchCommand(program: Command): void {
  program
    .command('search')
    .description('search entities (POST /api/v2/search) and print one page of brief records as XML')
    .option('--name <text>', 'names containing this text')
    .option('--type <type...>', 'entity types (any of them)')
    .addOption(new Option('--state <state...>', 'entity states (any of them)').choices([...RECORD_STATES, ...ENTITY_STATES]))
    .option('--page <n>', 'page number, from 1', integer(1), 1)
    .option('--page-size <n>', 'records per page', integer(1), 100)
    .action(async (options: SearchOptions, command: Command) => {
      const query = new URLSearchParams({ page: String(options.page), pageSize: String(options.pageSize) });
      const response = await clientOf(command).request(`/api/v2/search?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(searchBody(options)),
      });
      const unknown = response.headers.get('x-unknown-entity-types');
      if (unknown) {
        const types = unknownTypes(unknown);
        say(
          `warning: no record has the entity type${types.length > 1 ? 's' : ''} ${types.join(', ')}; a typo? (types are codes such as PERSON)`,
        );
      }
      await copyToStdout(response);
    });
}

/** The header's percent-encoded, comma-separated types, as a reader wants them. */
function unknownTypes(header: string): string[] {
  return header
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '')
    .map((type) => {
      try {
        return decodeURIComponent(type);
      } catch {
        return type;
      }
    });
}

/** The QueryParamsDef the options describe, in the real v2 names; --name is a CT_CONTAINS condition on the DISPLAY_NAME index. */
function searchBody(options: Pick<SearchOptions, 'name' | 'type' | 'state'>): SearchBody {
  const body: SearchBody = {};
  if (options.type) body.types = options.type;
  if (options.state) body.state = options.state.map((state) => state.replace(/^ERS_/, 'RS_'));
  if (options.name !== undefined) body.cond = { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: options.name };
  return body;
}
