import { appendFileSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadMeasuringAids } from '../../config.ts';
import type { ApplyTransaction } from '../../db/apply/index.ts';

/**
 * A measuring aid, off unless APPLY_TIMELINE names a file: each step of an
 * apply appends one JSON line with the wall time, the worker's CPU and the
 * CPU of the apply's PostgreSQL backend (from /proc: the database on the
 * same machine) spent since the previous step. Used to find where the wall
 * time of an apply goes and whether PostgreSQL or the worker was busy.
 */
export class ApplyTimeline {
  readonly #file: string;
  readonly #batchId: string;
  #backendPid: number | undefined;
  #last: { wall: number; cpu: NodeJS.CpuUsage; pg: number };
  /** How late the event loop ran: a statement or COPY chunk waiting for the worker waits this long. */
  readonly #delay = monitorEventLoopDelay({ resolution: 5 });

  private constructor(file: string, batchId: string) {
    this.#file = file;
    this.#batchId = batchId;
    this.#last = { wall: performance.now(), cpu: process.cpuUsage(), pg: 0 };
    this.#delay.enable();
  }

  /** A timeline when APPLY_TIMELINE is set, else undefined (every call site then costs a check). */
  static start(batchId: string): ApplyTimeline | undefined {
    const file = loadMeasuringAids().APPLY_TIMELINE;
    return file ? new ApplyTimeline(file, batchId) : undefined;
  }

  /** The PostgreSQL backend whose CPU counts from now on. */
  watchBackend(pid: number): void {
    this.#backendPid = pid;
    this.#last.pg = backendCpuMs(pid);
  }

  /** Ends step `step`: what it took since the previous mark. */
  mark(step: string): void {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    const pg = this.#backendPid === undefined ? 0 : backendCpuMs(this.#backendPid);
    const line = {
      batchId: this.#batchId,
      step,
      at: Date.now(),
      wallMs: Math.round(wall - this.#last.wall),
      workerCpuMs: Math.round((cpu.user - this.#last.cpu.user + cpu.system - this.#last.cpu.system) / 1000),
      pgCpuMs: this.#backendPid === undefined ? undefined : pg - this.#last.pg,
      loopDelayMaxMs: Number.isFinite(this.#delay.max) ? Math.round(this.#delay.max / 1e6) : 0,
    };
    this.#delay.reset();
    if (step === 'commit') this.#delay.disable();
    this.#last = { wall, cpu, pg };
    appendFileSync(this.#file, `${JSON.stringify(line)}\n`);
  }
}

/**
 * The apply's transaction with every call of it, and of its plan writer,
 * on the timeline: a step `X` is the database call X, the step `before X`
 * the worker's own work since the previous mark. Without a timeline the
 * transaction itself, so the apply's path carries no marks.
 */
export function timedTransaction(transaction: ApplyTransaction, timeline: ApplyTimeline | undefined): ApplyTransaction {
  return timeline === undefined ? transaction : timed(transaction, timeline, '');
}

function timed<T extends object>(target: T, timeline: ApplyTimeline, prefix: string): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const step = `${prefix}${String(property)}`;
      return (...args: unknown[]) => {
        timeline.mark(`before ${step}`);
        // Called on the object itself: its private fields are not the proxy's.
        const result: unknown = value.apply(object, args);
        if (property === 'planWriter') return timed(result as object, timeline, 'writer.');
        if (!(result instanceof Promise)) {
          timeline.mark(step);
          return result;
        }
        return result.then((resolved: unknown) => {
          timeline.mark(step);
          return resolved;
        });
      };
    },
  });
}

/** CPU milliseconds (user + system) a process has used; 0 when it cannot be read. */
function backendCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
