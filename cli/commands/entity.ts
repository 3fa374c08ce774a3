import type { Command } from 'commander';
import { clientOf, entityId, uuid } from '../arguments.ts';
import { copyToStdout } from '../output.ts';

export function registerEntityCommands(program: Command): void {
  const entity = program.command('entity').description('read entity records');

  entity
    .command('get')
    .description('print an entity record as XML: its current form, or its form in one revision')
    .argument('<id>', 'entity number or UUID', entityId)
    .option('--revision <uuid>', 'the revision to read', uuid)
    .action(async (id: string, options: { revision?: string }, command: Command) => {
      const path = options.revision === undefined ? `/api/v2/entities/${id}` : `/api/v2/entities/${id}/revision/${options.revision}`;
      await copyToStdout(await clientOf(command).request(path));
    });
}
