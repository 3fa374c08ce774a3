// Validates a batch file against the schema of its dialect.
//
//   npm run --silent validate -- FILE
//
// Prints {"valid":true,"version":"v2","changes":N,"creates":N,"updates":N} and exits 0, or
// {"valid":false,"errors":[{"line":..,"column":..,"message":..}]} and exits 1.
// Exits 2 when the file cannot be read.

import { readFile } from 'node:fs/promises';
import { InvalidXmlError, SchemaViolationError, type XmlProblem } from '../domain/errors.ts';
import { validateBatchXml, type SchemaVersion } from '../domain/validation/index.ts';
import { readBatch } from '../domain/xml/index.ts';

interface ValidReport {
  valid: true;
  version: SchemaVersion;
  changes: number;
  creates: number;
  updates: number;
}

interface InvalidReport {
  valid: false;
  errors: XmlProblem[];
}

async function check(xml: Uint8Array): Promise<ValidReport | InvalidReport> {
  try {
    // The same two steps as POST /batches: validate against the XSD, then read with the streaming reader.
    const { version } = await validateBatchXml(xml);
    const { changes, creates, updates } = await readBatch(
      (async function* () {
        yield xml;
      })(),
      () => undefined,
    );
    return { valid: true, version, changes, creates, updates };
  } catch (error) {
    if (error instanceof InvalidXmlError || error instanceof SchemaViolationError) {
      return { valid: false, errors: error.problems };
    }
    throw error;
  }
}

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
  const report = await check(xml);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  return report.valid ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
