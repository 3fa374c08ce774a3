import { Command, CommanderError, Option } from 'commander';
import packageJson from '../package.json' with { type: 'json' };
import { httpUrl } from './arguments.ts';
import { registerBatchCommands } from './commands/batch.ts';
import { registerEntityCommands } from './commands/entity.ts';
import { registerExportCommands } from './commands/export.ts';
import { registerSearchCommand } from './commands/search.ts';
import { registerUpdatesCommand } from './commands/updates.ts';
import { registerValidateCommand } from './commands/validate.ts';
import { CliError, EXIT, EXIT_MEANINGS, type ExitCode } from './errors.ts';

const DEFAULT_URL = 'http://127.0.0.1:8080';

const EXIT_HELP = `
Exit codes:
${Object.entries(EXIT_MEANINGS)
  .map(([code, meaning]) => `  ${code}  ${meaning}`)
  .join('\n')}

Results go to stdout; progress and messages to stderr (progress bars only on a terminal).`;

function buildProgram(): Command {
  const program = new Command('entity-records')
    .description('Command-line client of the Entity Records Service (REST v2)')
    .version(packageJson.version)
    .addOption(new Option('--url <url>', 'service base URL').env('ENTITY_RECORDS_URL').default(DEFAULT_URL).argParser(httpUrl))
    .addOption(new Option('--token <token>', 'bearer token').env('ENTITY_RECORDS_TOKEN'))
    .addOption(
      new Option('--key-id <id>', 'API key id: sign requests (NDA-HMAC-SHA256) instead of sending a token').env('ENTITY_RECORDS_KEY_ID'),
    )
    .addOption(
      new Option('--key-secret <secret>', "the API key's secret (prefer the environment variable)").env('ENTITY_RECORDS_KEY_SECRET'),
    )
    .addHelpText('after', EXIT_HELP)
    .showHelpAfterError('(add --help for usage)')
    // Settings the subcommands inherit: errors are thrown to runCli, which owns the exit code.
    .exitOverride();
  registerBatchCommands(program);
  registerEntityCommands(program);
  registerSearchCommand(program);
  registerUpdatesCommand(program);
  registerExportCommands(program);
  registerValidateCommand(program);
  return program;
}

/** Runs the CLI on `argv` (node, script, ...arguments) and returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<ExitCode> {
  try {
    await buildProgram().parseAsync([...argv]);
    return EXIT.ok;
  } catch (error) {
    // Commander has printed its own message (or the help, or the version).
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof CliError) {
      process.stderr.write(`entity-records: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`entity-records: unexpected failure: ${(error as Error).stack ?? String(error)}\n`);
    return EXIT.server;
  }
}
