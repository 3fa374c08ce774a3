// What an API process and its validation threads (pool.ts, thread.ts) say to
// each other. Errors cross as plain data: a structured clone keeps an Error's
// message but not its class or its list of problems, which the API answers.

import { InvalidXmlError, SchemaViolationError, type XmlProblem } from '../../domain/errors.ts';
import type { ValidatedBatch } from './validate.ts';
import type { SchemaVersion } from './versions.ts';

/** To a thread. `document` names an upload (one BatchValidator in the thread); `request` the reply to match. */
export type ThreadRequest =
  | { kind: 'push'; request: number; document: number; chunk: ArrayBuffer }
  | { kind: 'end'; request: number; document: number }
  | { kind: 'close'; document: number };

/** What a BatchValidator's getters answered once its last request was done. */
export interface Progress {
  version: SchemaVersion | undefined;
  hasSchemaErrors: boolean;
  changesSoFar: number;
}

/** From a thread: one for every push and end. */
export type ThreadReply =
  { request: number; ok: true; progress: Progress; validated?: ValidatedBatch } | { request: number; ok: false; error: SentError };

type SentError =
  | { kind: 'InvalidXml' | 'SchemaViolation'; problems: XmlProblem[] }
  | { kind: 'other'; name: string; message: string; stack: string | undefined };

export function sendable(error: unknown): SentError {
  if (error instanceof InvalidXmlError) return { kind: 'InvalidXml', problems: error.problems };
  if (error instanceof SchemaViolationError) return { kind: 'SchemaViolation', problems: error.problems };
  const { name, message, stack } = error instanceof Error ? error : new Error(String(error));
  return { kind: 'other', name, message, stack };
}

/** The error as the thread threw it: the same class and problems for the document's errors, a plain Error (a 500) for the rest. */
export function received(error: SentError): Error {
  if (error.kind !== 'other')
    return error.kind === 'InvalidXml' ? new InvalidXmlError(error.problems) : new SchemaViolationError(error.problems);
  const { name, message, stack } = error;
  const rebuilt = new Error(message);
  rebuilt.name = name;
  if (stack !== undefined) rebuilt.stack = stack;
  return rebuilt;
}
