import type { Command } from 'commander';
import { checkBatchXml } from '../../engine/validation/index.ts';
import { readInputFile } from '../arguments.ts';
import { CliError, EXIT } from '../errors.ts';
import { printResult } from '../output.ts';

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description('check a batch file offline, as POST /batches would (the check of npm run validate); prints a JSON report')
    .argument('<file>', 'batch XML file')
    .action(async (file: string) => {
      const report = await checkBatchXml(await readInputFile(file));
      await printResult(JSON.stringify(report));
      if (!report.valid)
        throw new CliError(
          EXIT.failed,
          `${file} is not a valid batch (${report.errors.length} ${report.errors.length === 1 ? 'problem' : 'problems'})`,
        );
    });
}
