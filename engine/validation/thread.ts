// A validation thread (started by pool.ts): validates the uploads its API
// process hands it, each in a BatchValidator of its own. Documents interleave
// here, slice by slice; the requests of one document run in order.

import { parentPort } from 'node:worker_threads';
import { sendable, type Progress, type ThreadReply, type ThreadRequest } from './messages.ts';
import { BatchValidator } from './validate.ts';

interface Held {
  validator: BatchValidator;
  /** The document's requests so far: the next one starts once they are done. */
  queue: Promise<void>;
}

const documents = new Map<number, Held>();

if (parentPort === null) throw new Error('engine/validation/thread.ts runs only as a worker thread (pool.ts starts it)');
const port = parentPort;

port.on('message', (message: ThreadRequest) => {
  const open = documents.get(message.document);
  if (message.kind === 'close') {
    documents.delete(message.document);
    if (open) open.queue = open.queue.then(() => open.validator.close());
    return;
  }
  const held = open ?? { validator: new BatchValidator(), queue: Promise.resolve() };
  // After its end a document is done with (its validator closes itself); before, it stays until closed.
  if (message.kind === 'end') documents.delete(message.document);
  else documents.set(message.document, held);
  held.queue = held.queue.then(() => answer(message, held.validator));
});

async function answer(message: Exclude<ThreadRequest, { kind: 'close' }>, validator: BatchValidator): Promise<void> {
  let reply: ThreadReply;
  try {
    if (message.kind === 'push') {
      await validator.push(new Uint8Array(message.chunk));
      reply = { request: message.request, ok: true, progress: progressOf(validator) };
    } else {
      const validated = await validator.end();
      reply = { request: message.request, ok: true, progress: progressOf(validator), validated };
    }
  } catch (error) {
    reply = { request: message.request, ok: false, error: sendable(error) };
  }
  port.postMessage(reply);
}

function progressOf(validator: BatchValidator): Progress {
  return { version: validator.version, hasSchemaErrors: validator.hasSchemaErrors, changesSoFar: validator.changesSoFar };
}
