import type { Client } from '@temporalio/client';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Logger } from '../logger.ts';
import { workflowReads, type WorkflowReadAnswer } from '../services/jobs/workflow-reads.ts';
import type { OutcomeCounts } from '../db/job-outcomes.ts';
import { uploadActivity } from '../api/upload-slots.ts';

// The API's metrics, one registry per app. Request durations are observed
// here; batch and export outcomes happen in the workers, so they are read
// from the database at scrape time (correct across any number of workers),
// from counts the tables' triggers keep: a scrape reads a few rows.
// How job status reads were answered by Temporal is this process's own count.

export type HttpLabel = 'route' | 'method' | 'status';

export interface ApiMetrics {
  registry: Registry;
  httpRequestDuration: Histogram<HttpLabel>;
  /** With PROXY_PROTOCOL on: connections closed for their PROXY header (api/proxy-protocol.ts), by reason. */
  proxyProtocolRefused?: Counter<'reason'>;
}

/** Up to 30 s: downloads and large batch uploads take seconds, not milliseconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createApiMetrics(deps: {
  db: Db;
  log: Logger;
  temporal: Client;
  config: Pick<Config, 'JOB_STATUS_CACHE_MS' | 'PROXY_PROTOCOL'>;
}): ApiMetrics {
  const registry = new Registry();
  const httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by matched route pattern ("unmatched" for unknown paths), method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });

  // A scrape collects every metric at once: the outcome counters share the one read in flight.
  let reading: Promise<OutcomeCounts | undefined> | undefined;
  const outcomes = (): Promise<OutcomeCounts | undefined> => {
    reading ??= deps.db.jobOutcomes
      .count()
      .catch((error: unknown) => {
        // The scrape still answers; the outcome counters keep their last values.
        deps.log.warn({ err: error }, 'metrics: cannot count outcomes');
        return undefined;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };

  countedFromDatabase(registry, 'batches_total', 'Batches finished, by outcome (every failed attempt counts)', outcomes, (counts) => ({
    COMPLETED: counts.batchesCompleted,
    FAILED: counts.batchesFailed,
  }));
  countedFromDatabase(registry, 'batch_changes_total', 'Changes written by completed batches', outcomes, (counts) => counts.batchChanges);
  countedFromDatabase(registry, 'exports_total', 'Exports finished, by outcome (expired ones count as COMPLETED)', outcomes, (counts) => ({
    COMPLETED: counts.exportsCompleted,
    FAILED: counts.exportsFailed,
  }));
  countedFromDatabase(registry, 'export_bytes_total', 'Bytes of completed export files', outcomes, (counts) => counts.exportBytes);

  new Gauge({
    name: 'batches_oldest_unfinished_seconds',
    help: 'Age of the oldest batch still ACCEPTED or PROCESSING (0 when none is): batches stranded or waiting long',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const counts = await outcomes();
      if (counts !== undefined) this.set(counts.oldestUnfinishedBatchSeconds);
    },
  });

  const reads = workflowReads(deps.temporal, deps.config.JOB_STATUS_CACHE_MS);
  new Counter({
    name: 'job_status_workflow_reads_total',
    help: 'Reads of a running job (status, detail, result) that needed its workflow, by how Temporal was asked: describe (a call), shared (joined a call in flight), cached (a recent answer)',
    labelNames: ['answer'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const answer of Object.keys(reads.counts) as WorkflowReadAnswer[]) this.inc({ answer }, reads.counts[answer]);
    },
  });
  new Gauge({
    name: 'job_status_workflow_answers_kept',
    help: 'Jobs whose workflow answer this process keeps for reuse, or is asking Temporal about',
    registers: [registry],
    collect() {
      this.set(reads.size);
    },
  });

  new Gauge({
    name: 'upload_slots_in_use',
    help: 'Batch uploads being read, validated and stored now, by slot size (large, small: a declared body within SMALL_BATCH_MAX_BYTES)',
    labelNames: ['size'] as const,
    registers: [registry],
    collect() {
      const activity = uploadActivity(deps.db);
      this.set({ size: 'large' }, activity.large.inUse);
      this.set({ size: 'small' }, activity.small.inUse);
    },
  });
  new Counter({
    name: 'uploads_cut_total',
    help: 'Batch uploads cut while their body arrived: idle (nothing for UPLOAD_IDLE_SECONDS), slow (below UPLOAD_MIN_BYTES_PER_SECOND)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(uploadActivity(deps.db).cut)) this.inc({ reason }, count);
    },
  });

  // The standbys as this process's read routing sees them (DATABASE_READ_URLS; none: no series).
  new Gauge({
    name: 'read_standby_in_rotation',
    help: 'Whether a standby serves the reads of this process (1) or is out of the rotation: lagging past REPLICA_MAX_LAG, not answering, or promoted (0)',
    labelNames: ['standby'] as const,
    registers: [registry],
    collect() {
      for (const view of deps.db.reads.standbys()) this.set({ standby: view.name }, view.inRotation ? 1 : 0);
    },
  });
  new Gauge({
    name: 'read_standby_lag_seconds',
    help: 'How far a standby was behind the primary at its last check (+Inf: further back than REPLICA_MAX_LAG, or never reached)',
    labelNames: ['standby'] as const,
    registers: [registry],
    collect() {
      for (const view of deps.db.reads.standbys()) this.set({ standby: view.name }, view.lagSeconds);
    },
  });
  new Counter({
    name: 'read_standby_reads_total',
    help: 'Reads this process sent to a standby',
    labelNames: ['standby'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const view of deps.db.reads.standbys()) this.inc({ standby: view.name }, view.served);
    },
  });

  const proxyProtocolRefused = deps.config.PROXY_PROTOCOL
    ? new Counter({
        name: 'proxy_protocol_refused_total',
        help: 'Connections closed before HTTP for their PROXY header: untrusted (a header from a peer outside TRUSTED_PROXIES), malformed, missing (a trusted proxy sent none), timeout',
        labelNames: ['reason'] as const,
        registers: [registry],
      })
    : undefined;

  return { registry, httpRequestDuration, ...(proxyProtocolRefused ? { proxyProtocolRefused } : {}) };
}

type Outcomes = () => Promise<OutcomeCounts | undefined>;

/**
 * A counter read from the database at each scrape: by outcome when `pick`
 * gives one count per outcome, else one total. Every process of a cluster
 * reports the same totals, so the cluster's sum takes the first.
 */
function countedFromDatabase(
  registry: Registry,
  name: string,
  help: string,
  outcomes: Outcomes,
  pick: (counts: OutcomeCounts) => Record<string, number> | number,
): void {
  new Counter({
    name,
    help,
    labelNames: ['outcome'] as const,
    registers: [registry],
    aggregator: 'first',
    async collect() {
      const counts = await outcomes();
      if (counts === undefined) return;
      this.reset();
      const picked = pick(counts);
      if (typeof picked === 'number') this.inc(picked);
      else for (const [outcome, value] of Object.entries(picked)) this.inc({ outcome }, value);
    },
  });
}
