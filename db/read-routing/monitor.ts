import pg from 'pg';
import { withDatabaseUser } from '../mikro-orm.config.ts';
import { lsnValue } from './lsn.ts';

// Where each standby stands, as this process last saw it: a cache of the
// standbys' own state (pg_last_wal_replay_lsn), refreshed every CHECK_EVERY_MS,
// so choosing a standby for a read costs no round trip. A standby's lag is
// measured against the primary's WAL positions as sampled here: it has
// replayed everything the primary had written at the newest sample its replay
// position reaches, so an idle primary shows no lag and a delayed standby shows
// how far back it stands.

const CHECK_EVERY_MS = 1000;
/** A standby that does not answer a check in this long is out of the rotation. */
const CHECK_TIMEOUT_MS = 2000;

export interface StandbyView {
  /** The standby's URL without credentials: for logs and metrics. */
  readonly name: string;
  /** Answering, still in recovery and within the lag bound. */
  inRotation: boolean;
  /** The WAL position it has replayed, at the last check. */
  replayed: bigint;
  /** Seconds behind the primary at the last check (Infinity: further back than the samples kept). */
  lagSeconds: number;
  /** Reads this process has sent to it. */
  served: number;
}

interface Sample {
  at: number;
  lsn: bigint;
}

export interface MonitorLog {
  warn(object: object, message: string): void;
}

export class StandbyMonitor {
  readonly views: readonly StandbyView[];
  private readonly probes: pg.Pool[];
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly primary: pg.Pool;
  private readonly maxLagSeconds: number;
  private readonly log: MonitorLog;

  constructor(primary: pg.Pool, standbyUrls: readonly string[], maxLagSeconds: number, log: MonitorLog) {
    this.primary = primary;
    this.maxLagSeconds = maxLagSeconds;
    this.log = log;
    this.views = standbyUrls.map((url) => ({ name: nameOf(url), inRotation: false, replayed: 0n, lagSeconds: Infinity, served: 0 }));
    this.probes = standbyUrls.map((url) => {
      const probe = new pg.Pool({
        connectionString: withDatabaseUser(url),
        max: 1,
        connectionTimeoutMillis: CHECK_TIMEOUT_MS,
        query_timeout: CHECK_TIMEOUT_MS,
        application_name: 'entity-records-standby-check',
      });
      probe.on('error', () => undefined);
      return probe;
    });
  }

  /** Checks every standby now, then every CHECK_EVERY_MS until stopped. */
  async start(): Promise<void> {
    await this.checkNow();
    this.timer = setInterval(() => void this.checkNow(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  /** One round of checks (a round still running is joined, not doubled). */
  checkNow(): Promise<void> {
    this.running ??= this.check().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** A read on this standby failed for the standby's sake: out of the rotation until a check finds it answering. */
  markDown(view: StandbyView): void {
    if (view.inRotation) this.log.warn({ standby: view.name }, 'standby left the read rotation: a read on it failed');
    view.inRotation = false;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await Promise.all(this.probes.map((probe) => probe.end()));
  }

  private async check(): Promise<void> {
    try {
      const { rows } = await this.primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
      this.sample({ at: Date.now(), lsn: lsnValue(rows[0]!.lsn) });
    } catch {
      // The primary's own trouble is the writes' to report; the standbys keep their last state.
      return;
    }
    await Promise.all(this.views.map((view, index) => this.checkStandby(view, this.probes[index]!)));
  }

  private async checkStandby(view: StandbyView, probe: pg.Pool): Promise<void> {
    const wasIn = view.inRotation;
    try {
      const { rows } = await probe.query<{ recovering: boolean; replayed: string | null }>(
        'select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as replayed',
      );
      const row = rows[0]!;
      if (!row.recovering || row.replayed === null) {
        // Promoted: it no longer follows this primary, so what it holds may differ from what the primary commits.
        view.inRotation = false;
        if (wasIn) this.log.warn({ standby: view.name }, 'standby left the read rotation: it is no longer in recovery');
        return;
      }
      view.replayed = lsnValue(row.replayed);
      view.lagSeconds = this.lagOf(view.replayed);
      view.inRotation = view.lagSeconds <= this.maxLagSeconds;
      if (wasIn && !view.inRotation)
        this.log.warn({ standby: view.name, lagSeconds: view.lagSeconds }, 'standby left the read rotation: lagging');
    } catch (error) {
      view.inRotation = false;
      if (wasIn) this.log.warn({ standby: view.name, err: error }, 'standby left the read rotation: not answering');
    }
  }

  private sample(sample: Sample): void {
    this.samples.push(sample);
    // Samples older than the lag bound tell only "too far back": one of them is enough.
    const horizon = sample.at - (this.maxLagSeconds * 1000 + 2 * CHECK_EVERY_MS);
    while (this.samples.length > 1 && this.samples[1]!.at < horizon) this.samples.shift();
  }

  /** Seconds since the primary last stood where the standby has replayed to. */
  private lagOf(replayed: bigint): number {
    const now = Date.now();
    for (let index = this.samples.length - 1; index >= 0; index--) {
      const sample = this.samples[index]!;
      if (sample.lsn <= replayed) return index === this.samples.length - 1 ? 0 : (now - this.samples[index + 1]!.at) / 1000;
    }
    return Infinity;
  }
}

function nameOf(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}
