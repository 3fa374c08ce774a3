// Validates a batch file against the schema of its dialect.
//
//   npm run --silent validate -- FILE
//
// Prints {"valid":true,"version":"v2","changes":N,"creates":N,"updates":N} and exits 0, or
// {"valid":false,"errors":[{"line":..,"column":..,"message":..}]} and exits 1.
// Exits 2 when the file cannot be read. `entity-records validate FILE` runs the same check.

import { readFile } from 'node:fs/promises';
import { checkBatchXml } from '../engine/validation/index.ts';

async function main(args: string[]): Promise<number> {
  const [file] = args;
  if (file === undefined || args.length !== 1) {
    process.stderr.write('usage: npm run --silent validate -- FILE\n');
    return 2;
  }
  let xml: Uint8Array;
  try {
    xml = await readFile(file);
  } catch (error) {
    process.stderr.write(`cannot read ${file}: ${(error as Error).message}\n`);
    return 2;
  }
  const report = await checkBatchXml(xml);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  return report.valid ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
