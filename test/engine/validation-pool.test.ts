import { afterAll, describe, expect, it } from 'vitest';
import { InvalidXmlError, SchemaViolationError } from '../../domain/errors.ts';
import { ValidationPool, ValidationThreadLost, validateBatchXml, type BatchValidation } from '../../engine/validation/index.ts';
import { batchXml, create } from '../support/batches.ts';
import { CRASH_MARKER, crashingThreadEntry } from '../support/validation-crash.ts';

// The validator run in threads (engine/validation/pool.ts) answers as the
// one run on the caller's thread: the same batch, the same errors with the
// same positions; a thread that dies fails the documents it held.

const UUID = '22222222-2222-4222-8222-222222222222';

async function feed(validator: BatchValidation, xml: string, pieceBytes: number) {
  const bytes = Buffer.from(xml);
  try {
    for (let at = 0; at < bytes.length; at += pieceBytes) await validator.push(bytes.subarray(at, at + pieceBytes));
    return await validator.end();
  } finally {
    validator.close();
  }
}

const outcome = (work: Promise<unknown>): Promise<{ value?: unknown; error?: unknown }> =>
  work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe('validation threads', () => {
  const pools: ValidationPool[] = [];
  const pool = (threads: number) => {
    const made = new ValidationPool({ threads });
    pools.push(made);
    return made;
  };
  afterAll(async () => {
    await Promise.all(pools.map((made) => made.close()));
  });

  it('answers a valid batch as the validator on this thread does, with its progress on the way', async () => {
    const xml = batchXml([create('a', 'Alfa'), create('b', 'Beta'), create('c', 'Gama')], { uuid: UUID });
    const validator = pool(1).open();
    expect(validator.version).toBeUndefined();
    const bytes = Buffer.from(xml);
    await validator.push(bytes.subarray(0, 600));
    expect(validator.version).toBe('v2');
    await validator.push(bytes.subarray(600));
    expect(await validator.end()).toEqual(await validateBatchXml(bytes));
    expect(await validateBatchXml(bytes)).toMatchObject({ version: 'v2', changes: 3, batchUuid: UUID });
  });

  it('throws the same errors, with the same problems and positions, as the validator on this thread', async () => {
    const threads = pool(2);
    const schemaErrors = batchXml([
      create('a', 'Alfa', { entityType: '' }),
      create('b', 'Beta'),
      create('c', 'Gama', { entityType: '' }),
    ]).replaceAll('<createEntity', '\n<createEntity');
    const malformed = batchXml([create('a', 'Alfa')]).replace('</createEntity>', '</createEntiti>');
    const doctype = `<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e "e">]>\n<x/>`;
    for (const [xml, ErrorClass] of [
      [schemaErrors, SchemaViolationError],
      [malformed, InvalidXmlError],
      [doctype, InvalidXmlError],
    ] as const) {
      const here = await outcome(validateBatchXml(Buffer.from(xml)));
      const there = await outcome(feed(threads.open(), xml, 7));
      expect(here.error).toBeInstanceOf(ErrorClass);
      expect(there.error).toBeInstanceOf(ErrorClass);
      expect((there.error as Error).message).toBe((here.error as Error).message);
      expect((there.error as SchemaViolationError).problems).toEqual((here.error as SchemaViolationError).problems);
    }
    const problems = ((await outcome(feed(threads.open(), schemaErrors, 1000))).error as SchemaViolationError).problems;
    expect(problems.map(({ line, column }) => ({ line, column }))).toEqual([
      { line: 3, column: 1 },
      { line: 5, column: 1 },
    ]);
  });

  it('fails the documents of a thread that dies, and only those; the next document gets a new thread', async () => {
    const lost: Error[] = [];
    const threads = new ValidationPool({ threads: 2, entry: crashingThreadEntry, onThreadLost: (error) => lost.push(error) });
    pools.push(threads);
    const xml = batchXml([create('a', 'Alfa'), create('b', 'Beta')], { uuid: UUID });
    const [first, second, third] = [threads.open(), threads.open(), threads.open()];
    // first and third share the first thread; second is alone in the other.
    for (const validator of [first, second, third]) await validator!.push(Buffer.from(xml.slice(0, 400)));
    await expect(third!.push(Buffer.from(CRASH_MARKER))).rejects.toBeInstanceOf(ValidationThreadLost);
    await expect(first!.push(Buffer.from(xml.slice(400)))).rejects.toBeInstanceOf(ValidationThreadLost);
    await second!.push(Buffer.from(xml.slice(400)));
    expect((await second!.end()).changes).toBe(2);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/crashed on purpose/);
    expect((await feed(threads.open(), xml, 100)).changes).toBe(2);
    first!.close();
    third!.close();
  });
});
