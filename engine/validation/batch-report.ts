import { InvalidXmlError, SchemaViolationError, type XmlProblem } from '../../domain/errors.ts';
import { readBatch } from '../../domain/xml/batch-reader.ts';
import { validateBatchXml } from './validate.ts';
import type { SchemaVersion } from './versions.ts';

// The offline check of a batch file, shared by scripts/validate.ts and the
// CLI's `validate`: the same two steps as POST /batches.

interface ValidBatchReport {
  valid: true;
  version: SchemaVersion;
  changes: number;
  creates: number;
  updates: number;
}

interface InvalidBatchReport {
  valid: false;
  errors: XmlProblem[];
}

export type BatchReport = ValidBatchReport | InvalidBatchReport;

/** Validates against the XSD, then reads with the streaming reader; a bad document is a report, not a throw. */
export async function checkBatchXml(xml: Uint8Array): Promise<BatchReport> {
  try {
    const { version } = await validateBatchXml(xml);
    const { changes, creates, updates } = await readBatch(
      (async function* () {
        yield xml;
      })(),
      () => undefined,
    );
    return { valid: true, version, changes, creates, updates };
  } catch (error) {
    if (error instanceof InvalidXmlError || error instanceof SchemaViolationError) return { valid: false, errors: error.problems };
    throw error;
  }
}
