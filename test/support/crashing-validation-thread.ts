// The entry of a validation thread that crashes on demand (validation-crash.ts):
// engine/validation/thread.ts, and beside it a listener that throws, uncaught,
// on a chunk holding CRASH_MARKER, before the thread answers it.
import { parentPort } from 'node:worker_threads';
import '../../engine/validation/thread.ts';
import { CRASH_MARKER } from './validation-crash.ts';

const marker = Buffer.from(CRASH_MARKER);

parentPort?.on('message', (message: { kind: string; chunk?: ArrayBuffer }) => {
  if (message.kind === 'push' && message.chunk !== undefined && Buffer.from(message.chunk).includes(marker)) {
    throw new Error('the validation thread crashed on purpose (test/support/crashing-validation-thread.ts)');
  }
});
