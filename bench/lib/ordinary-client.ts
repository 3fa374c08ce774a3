// The ordinary client of the abuse-latency benchmark: what the real client
// (ELZA) does while an archivist works, under a token of its own, at fixed
// rates whatever the answers take (a slow answer does not slow the next
// request, so a stall shows as latency, not as fewer requests): GETs of
// records (the hot route), small saves (POST of a one-change batch, then its
// status polled until FINISHED, as the real client polls) and the change feed
// followed from its mark (test/support/feed-follower.ts). Every request's
// latency is kept; any answer but a 2xx, a timeout or a reset is an error.
import { randomUUID } from 'node:crypto';
import { batchXml, create } from '../../test/support/batches.ts';
import { FeedFollower } from '../../test/support/feed-follower.ts';
import { sleep } from '../../test/support/poll.ts';

interface OrdinaryRates {
  getsPerSecond: number;
  savesPerSecond: number;
  /** Feed syncs started per second; a tick that finds the last sync still running is skipped (the mark is one). */
  feedsPerSecond: number;
}

const ORDINARY_RATES: OrdinaryRates = { getsPerSecond: 20, savesPerSecond: 1, feedsPerSecond: 1 };

/** What the ordinary client saw in one phase; latencies in ms. */
export interface OrdinarySample {
  gets: number[];
  savePosts: number[];
  /** From the save's POST to its status FINISHED (and its detail COMPLETED). */
  saves: number[];
  feeds: number[];
  feedTicksSkipped: number;
  /** What went wrong → how often ("GET 503", "save POST timeout", …). */
  errors: Map<string, number>;
}

/** A request that gets no answer within this is an error (a timeout). */
const REQUEST_TIMEOUT_MS = 30_000;
/** The save's status is polled this often, as bench:interactive polls. */
const STATUS_POLL_MS = 50;
/** After a phase's last tick, its requests still in flight get this long to end; then they are cut and counted as errors. */
const GRACE_MS = 30_000;

export class OrdinaryClient {
  readonly #apiUrl: string;
  readonly #headers: Record<string, string>;
  readonly #ids: readonly number[];
  readonly #feed: FeedFollower;
  readonly #rates: OrdinaryRates;
  #sample: OrdinarySample = emptySample();
  #cut = new AbortController();
  #gets = 0;

  constructor(apiUrl: string, token: string, ids: readonly number[], feedMark: string, rates: OrdinaryRates = ORDINARY_RATES) {
    this.#apiUrl = apiUrl;
    this.#headers = { authorization: `Bearer ${token}` };
    this.#ids = ids;
    this.#rates = rates;
    this.#feed = new FeedFollower(async (path) => {
      const answer = await this.#request('feed', `/api/v2${path}`, {}, this.#sample.feeds);
      if (answer === undefined) throw new Error('feed request failed');
      return answer;
    }, feedMark);
  }

  /** Runs the client for `durationMs`, then waits (at most GRACE_MS) for what it started; resolves what it saw. */
  async run(durationMs: number): Promise<OrdinarySample> {
    this.#sample = emptySample();
    this.#cut = new AbortController();
    const started = performance.now();
    const deadline = started + durationMs;
    const inFlight = new Set<Promise<void>>();
    const track = (work: Promise<void>) => {
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    };
    let feedBusy = false;
    const feedSync = async () => {
      if (feedBusy) {
        this.#sample.feedTicksSkipped += 1;
        return;
      }
      feedBusy = true;
      try {
        await this.#feed.sync();
      } catch {
        // Counted by the request that failed.
      } finally {
        feedBusy = false;
      }
    };
    await Promise.all([
      ticks(started, deadline, this.#rates.getsPerSecond, () => track(this.#get())),
      ticks(started, deadline, this.#rates.savesPerSecond, () => track(this.#save())),
      ticks(started, deadline, this.#rates.feedsPerSecond, () => track(feedSync())),
    ]);
    const settled = Promise.allSettled([...inFlight]);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise((resolve) => (grace = setTimeout(resolve, GRACE_MS)))]);
    clearTimeout(grace);
    this.#cut.abort();
    await settled;
    return this.#sample;
  }

  #error(what: string): void {
    this.#sample.errors.set(what, (this.#sample.errors.get(what) ?? 0) + 1);
  }

  /** One request; its latency goes to `latencies` when it is answered 2xx. Resolves the body, or undefined (an error, counted). */
  async #request(what: string, path: string, init: RequestInit, latencies?: number[]): Promise<string | undefined> {
    const started = performance.now();
    try {
      const response = await fetch(`${this.#apiUrl}${path}`, {
        ...init,
        headers: { ...this.#headers, ...(init.headers as Record<string, string> | undefined) },
        signal: AbortSignal.any([this.#cut.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      });
      const body = await response.text();
      if (response.status < 200 || response.status > 299) {
        this.#error(`${what} ${response.status}`);
        return undefined;
      }
      latencies?.push(performance.now() - started);
      return body;
    } catch (error) {
      const name = (error as Error).name;
      this.#error(
        `${what} ${name === 'TimeoutError' ? 'timeout' : name === 'AbortError' ? 'unfinished at the phase end' : 'network error'}`,
      );
      return undefined;
    }
  }

  async #get(): Promise<void> {
    const id = this.#ids[this.#gets++ % this.#ids.length]!;
    await this.#request('GET', `/api/v2/entities/${id}`, {}, this.#sample.gets);
  }

  async #save(): Promise<void> {
    const started = performance.now();
    const answer = await this.#request(
      'save POST',
      '/api/v2/batches',
      { method: 'POST', headers: { 'content-type': 'application/xml' }, body: batchXml([create('o', `Ordinary ${randomUUID()}`)]) },
      this.#sample.savePosts,
    );
    if (answer === undefined) return;
    const id = JSON.parse(answer) as string;
    for (;;) {
      const status = await this.#request('save status', `/api/v2/batches/${id}/status`, {});
      if (status === undefined) return;
      const { state } = JSON.parse(status) as { state: string };
      if (state === 'FINISHED' || state === 'ERROR') {
        const detail = await this.#request('save detail', `/api/v2/batches/${id}/detail`, {});
        if (detail === undefined) return;
        const ended = (JSON.parse(detail) as { status: string }).status;
        if (ended === 'COMPLETED') this.#sample.saves.push(performance.now() - started);
        else this.#error(`save ended ${ended}`);
        return;
      }
      await sleep(STATUS_POLL_MS);
    }
  }
}

function emptySample(): OrdinarySample {
  return { gets: [], savePosts: [], saves: [], feeds: [], feedTicksSkipped: 0, errors: new Map() };
}

/** Calls `start` `perSecond` times a second, on a fixed schedule from `started`, until `deadline`. */
async function ticks(started: number, deadline: number, perSecond: number, start: () => void): Promise<void> {
  if (perSecond <= 0) return;
  for (let n = 0; ; n += 1) {
    const at = started + (n * 1000) / perSecond;
    if (at >= deadline) return;
    const wait = at - performance.now();
    if (wait > 0) await sleep(wait);
    start();
  }
}
