// The service as a client sees it: plain HTTP to 127.0.0.1 with the stack's
// admin token, every request bounded by a timeout.
import type { Stack } from '../../../bench/lib/stack.ts';
import { BENCH_TOKEN } from '../../../bench/lib/stack.ts';
import { every, pollUntil } from '../../support/poll.ts';

export interface Answer {
  /** HTTP status, or 0 when no answer came (refused, reset, timed out). */
  status: number;
  body: string;
  error?: string;
  ms: number;
}

export interface BatchStatus {
  updateRequestId: string;
  status: 'ACCEPTED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  changesTotal: number | null;
  changesApplied: number;
}

export interface ExportStatus {
  id: string;
  status: 'ACCEPTED' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
  entitiesWritten: number;
  bytes: number;
  sha256: string | null;
  error: string | null;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class ServiceClient {
  private readonly stack: Pick<Stack, 'apiUrl'>;

  constructor(stack: Pick<Stack, 'apiUrl'>) {
    this.stack = stack;
  }

  async request(path: string, init: RequestInit = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Answer> {
    const started = performance.now();
    try {
      const response = await fetch(`${this.stack.apiUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...(init.headers as Record<string, string> | undefined) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = await response.text();
      return { status: response.status, body, ms: performance.now() - started };
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause;
      return {
        status: 0,
        body: '',
        error: `${(error as Error).message}${cause ? `: ${cause.message}` : ''}`,
        ms: performance.now() - started,
      };
    }
  }

  async requestBytes(path: string): Promise<{ status: number; body: Buffer; headers: Headers }> {
    const response = await fetch(`${this.stack.apiUrl}${path}`, {
      headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'accept-encoding': 'identity' },
      signal: AbortSignal.timeout(120_000),
    });
    return { status: response.status, body: Buffer.from(await response.arrayBuffer()), headers: response.headers };
  }

  submitBatch(body: Buffer | string): Promise<Answer> {
    return this.request('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body }, 120_000);
  }

  /** POSTs a batch and expects 200; returns its id. */
  async submitBatchOk(body: Buffer | string): Promise<string> {
    const answer = await this.submitBatch(body);
    if (answer.status !== 200)
      throw new Error(`POST /api/v2/batches answered ${answer.status || answer.error}: ${answer.body.slice(0, 500)}`);
    return JSON.parse(answer.body) as string;
  }

  /** The batch's detail resource (the service's own status with counts). */
  async batchStatus(id: string): Promise<BatchStatus> {
    const answer = await this.request(`/api/v2/batches/${id}/detail`);
    if (answer.status !== 200)
      throw new Error(`GET status of batch ${id} answered ${answer.status || answer.error}: ${answer.body.slice(0, 300)}`);
    return JSON.parse(answer.body) as BatchStatus;
  }

  async batchResult(id: string): Promise<string> {
    const answer = await this.request(`/api/v2/batches/${id}/result`);
    if (answer.status !== 200)
      throw new Error(`GET result of batch ${id} answered ${answer.status || answer.error}: ${answer.body.slice(0, 300)}`);
    return answer.body;
  }

  startExport(kind: 'snapshots' | 'revisions', ids: Array<string | number> = [], query = ''): Promise<Answer> {
    return this.request(`/api/v2/export/${kind}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ids),
    });
  }

  async startExportOk(kind: 'snapshots' | 'revisions', ids: Array<string | number> = [], query = ''): Promise<string> {
    const answer = await this.startExport(kind, ids, query);
    if (answer.status !== 200)
      throw new Error(`POST /api/v2/export/${kind} answered ${answer.status || answer.error}: ${answer.body.slice(0, 300)}`);
    return answer.body.trim();
  }

  /** The export's detail resource (the service's own status with counts). */
  async exportStatus(id: string): Promise<ExportStatus> {
    const answer = await this.request(`/api/v2/export/${id}/detail`);
    if (answer.status !== 200)
      throw new Error(`GET status of export ${id} answered ${answer.status || answer.error}: ${answer.body.slice(0, 300)}`);
    return JSON.parse(answer.body) as ExportStatus;
  }

  waitExport(id: string, timeoutMs: number): Promise<ExportStatus> {
    return pollUntil(
      async () => {
        const status = await this.exportStatus(id);
        return status.status === 'COMPLETED' || status.status === 'FAILED' ? status : undefined;
      },
      { timeoutMs, intervalMs: 250, what: `export ${id} to finish` },
    );
  }
}

/**
 * GET /status of one batch every `intervalMs` in the background, keeping
 * every answer that was not a 2xx/4xx (a 5xx or no answer at all).
 */
export function watchBatchStatus(client: ServiceClient, batchId: string, intervalMs = 200) {
  const bad: string[] = [];
  let polls = 0;
  const seen: string[] = [];
  let paused = false;
  const loop = every(intervalMs, async () => {
    if (paused) return;
    const answer = await client.request(`/api/v2/batches/${batchId}/status`, {}, 5000);
    if (paused) return;
    polls += 1;
    if (answer.status === 0 || answer.status >= 500) {
      bad.push(`${new Date().toISOString()} ${answer.status || 'no answer'} ${answer.error ?? answer.body.slice(0, 200)}`);
      return;
    }
    if (answer.status === 200) {
      const status = (JSON.parse(answer.body) as { state: string }).state;
      if (seen.at(-1) !== status) seen.push(status);
    }
  });
  return {
    /** Runs `fault` without polling (an API restarting answers nothing, as it should). */
    async pausedWhile<T>(fault: () => Promise<T>): Promise<T> {
      paused = true;
      try {
        return await fault();
      } finally {
        paused = false;
      }
    },
    async stop(): Promise<{ polls: number; bad: string[]; seen: string[] }> {
      await loop.stop();
      return { polls, bad, seen };
    },
  };
}
