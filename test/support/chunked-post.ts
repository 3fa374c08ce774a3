// A POST whose body is written as it is made (transfer-encoding: chunked),
// with its answer read as text: how the upload tests and the upload
// benchmark send bodies no one holds whole.
import { once } from 'node:events';
import { request, type ClientRequest } from 'node:http';

export interface ChunkedPost {
  readonly request: ClientRequest;
  /** Writes a chunk, waiting for the socket to drain when it asks to. */
  write(chunk: Buffer): Promise<void>;
  /** Status and body of the answer; rejects when the request fails. */
  readonly answered: Promise<{ status: number; answer: string }>;
}

export function chunkedPost(url: URL, headers: Record<string, string>): ChunkedPost {
  const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } });
  const answered = new Promise<{ status: number; answer: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => (answer += text));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, answer }));
    });
    req.on('error', reject);
  });
  return {
    request: req,
    answered,
    async write(chunk) {
      if (!req.write(chunk)) await once(req, 'drain');
    },
  };
}

export interface TrickledPost {
  /** Status and body of the answer, or undefined when the connection ended without one (cut). */
  readonly ended: Promise<{ status: number; answer: string } | undefined>;
  /** Whether it has ended, answered or cut. */
  readonly isOver: () => boolean;
  /** Stops trickling and drops the connection. */
  stop(): void;
}

/**
 * A chunked POST that sends `start` and then one byte of `rest` every
 * `everyMs`, as a writer on a link too slow to be one would: the load of the
 * trickle tests, never how they wait.
 */
export function trickledPost(url: URL, headers: Record<string, string>, start: string, rest: string, everyMs: number): TrickledPost {
  const post = chunkedPost(url, headers);
  let over = false;
  let next = 0;
  const timer = setInterval(() => {
    if (next < rest.length) post.request.write(rest[next++]!);
  }, everyMs);
  const ended = post.answered.then(
    (answer) => answer,
    () => undefined,
  );
  void ended.finally(() => {
    over = true;
    clearInterval(timer);
  });
  post.request.write(start);
  return {
    ended,
    isOver: () => over,
    stop() {
      clearInterval(timer);
      post.request.destroy();
    },
  };
}
