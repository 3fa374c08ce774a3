// Validation of uploads in worker threads, off the event loop that answers
// every other request of the API process: libxml2 parses and validates each
// slice synchronously, for tens of milliseconds a slice, hundreds for a long
// element. The validator itself is the one of validate.ts, run in a thread
// (thread.ts); here is only its proxy. A thread validates many documents at
// once and keeps each one to the end. A thread that dies (a crash, a wasm
// trap that escapes, memory) fails the documents it held, and only those,
// with ValidationThreadLost; the next document starts a new thread.

import { Worker } from 'node:worker_threads';
import { received, type Progress, type ThreadReply, type ThreadRequest } from './messages.ts';
import type { ValidatedBatch } from './validate.ts';
import type { SchemaVersion } from './versions.ts';

/** What the upload path needs of a batch's validator: BatchValidator's shape, on this thread or behind a proxy. */
export interface BatchValidation {
  /** Settles once the chunk is validated as far as it goes: the caller reads the next one only then. */
  push(chunk: Uint8Array): Promise<void>;
  end(): Promise<ValidatedBatch>;
  /** Frees the document's state; for a document abandoned before `end`. */
  close(): void;
  readonly version: SchemaVersion | undefined;
  readonly hasSchemaErrors: boolean;
  readonly changesSoFar: number;
}

/** Where the upload path gets a validator per upload: the validation threads, or a stand-in of a test. */
export interface BatchValidators {
  open(): BatchValidation;
}

/** The thread that held a document died before it answered; the document itself may be fine. */
export class ValidationThreadLost extends Error {
  override readonly name = 'ValidationThreadLost';
}

export interface ValidationPoolOptions {
  /** Threads at most (VALIDATION_THREADS). */
  threads: number;
  /** Told of every thread that died, with why. */
  onThreadLost?: (error: Error) => void;
  /** The thread's entry; a test passes one that wraps thread.ts to crash it. */
  entry?: URL;
}

const THREAD_ENTRY = new URL('./thread.ts', import.meta.url);

/** The validation threads of one API process: `open` a validator per upload. */
export class ValidationPool implements BatchValidators {
  readonly #options: ValidationPoolOptions;
  #threads: Thread[] = [];
  #nextDocument = 1;
  #closed = false;

  constructor(options: ValidationPoolOptions) {
    this.#options = options;
  }

  open(): BatchValidation {
    if (this.#closed) throw new Error('the validation pool is closed');
    return new ThreadedBatch(this.#pick(), this.#nextDocument++);
  }

  /** Ends every thread; what they still held fails. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#threads;
    this.#threads = [];
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  /** A new thread while there are fewer than allowed (a dead one is replaced so), else the one holding the fewest documents. */
  #pick(): Thread {
    if (this.#threads.length < this.#options.threads) {
      const thread = new Thread(this.#options.entry ?? THREAD_ENTRY, (error) => {
        this.#threads = this.#threads.filter((other) => other !== thread);
        if (!this.#closed) this.#options.onThreadLost?.(error);
      });
      this.#threads.push(thread);
      return thread;
    }
    return this.#threads.reduce((fewest, thread) => (thread.documents < fewest.documents ? thread : fewest));
  }
}

type Settle = (reply: ThreadReply) => void;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

class Thread {
  readonly worker: Worker;
  /** Documents open in this thread. */
  documents = 0;
  #nextRequest = 1;
  readonly #waiting = new Map<number, { settle: Settle; fail: (error: Error) => void }>();
  #lost: ValidationThreadLost | undefined;

  constructor(entry: URL, onLost: (error: Error) => void) {
    this.worker = new Worker(entry, { name: 'validation' });
    // Never what keeps the process alive: the API's stop ends the threads, an exit needs no wait for them.
    this.worker.unref();
    let failure: Error | undefined;
    this.worker.on('message', (reply: ThreadReply) => {
      const waiting = this.#waiting.get(reply.request);
      this.#waiting.delete(reply.request);
      waiting?.settle(reply);
    });
    // Without a listener, the error of a dying thread would be thrown in this one and end the process.
    this.worker.on('error', (error) => {
      failure = error;
    });
    this.worker.on('messageerror', (error) => {
      failure = error;
      void this.worker.terminate();
    });
    this.worker.on('exit', (code) => {
      const why = failure ? `${failure.name}: ${failure.message}` : `exit code ${code}`;
      const lost = new ValidationThreadLost(`the validation thread stopped (${why})`, { cause: failure });
      this.#lost = lost;
      for (const { fail } of this.#waiting.values()) fail(lost);
      this.#waiting.clear();
      onLost(lost);
    });
  }

  /** Sends `message` under a request number of its own and settles with the thread's reply to it. */
  request(
    message: DistributiveOmit<Exclude<ThreadRequest, { kind: 'close' }>, 'request'>,
    transfer: ArrayBuffer[] = [],
  ): Promise<Extract<ThreadReply, { ok: true }>> {
    if (this.#lost) return Promise.reject(this.#lost);
    const request = this.#nextRequest++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(request, {
        settle: (reply) => (reply.ok ? resolve(reply) : reject(received(reply.error))),
        fail: reject,
      });
      this.worker.postMessage({ ...message, request } satisfies ThreadRequest, transfer);
    });
  }

  close(document: number): void {
    if (!this.#lost) this.worker.postMessage({ kind: 'close', document } satisfies ThreadRequest);
  }
}

/** A BatchValidator in a thread, as the upload path sees it; the getters answer as of the last reply. */
class ThreadedBatch implements BatchValidation {
  readonly #thread: Thread;
  readonly #document: number;
  #progress: Progress = { version: undefined, hasSchemaErrors: false, changesSoFar: 0 };
  #done = false;

  constructor(thread: Thread, document: number) {
    this.#thread = thread;
    this.#document = document;
    thread.documents += 1;
  }

  get version(): SchemaVersion | undefined {
    return this.#progress.version;
  }

  get hasSchemaErrors(): boolean {
    return this.#progress.hasSchemaErrors;
  }

  get changesSoFar(): number {
    return this.#progress.changesSoFar;
  }

  async push(chunk: Uint8Array): Promise<void> {
    if (this.#done) throw new Error('the document was closed');
    // A request's chunk may be a slice of Node's shared pool: its own copy is what moves to the thread.
    const copy = new Uint8Array(chunk);
    const reply = await this.#thread.request({ kind: 'push', document: this.#document, chunk: copy.buffer }, [copy.buffer]);
    this.#progress = reply.progress;
  }

  async end(): Promise<ValidatedBatch> {
    if (this.#done) throw new Error('the document was closed');
    // The thread lets go of the document at its end, whatever it finds.
    this.#release();
    const reply = await this.#thread.request({ kind: 'end', document: this.#document });
    this.#progress = reply.progress;
    return reply.validated as ValidatedBatch;
  }

  close(): void {
    if (this.#done) return;
    this.#release();
    this.#thread.close(this.#document);
  }

  #release(): void {
    this.#done = true;
    this.#thread.documents -= 1;
  }
}
