// npm run bench:uploads [-- --uploads 12 --entities 30000 --accept-only --json FILE]
// npm run bench:uploads -- --streamed 256,1024 [--json FILE]
// Many large uploads at once: `uploads` different batches of `entities` new
// entities each (about 49 MB at 30,000), POSTed at the same moment to one API
// with one worker. Measures whether all are accepted, the API's and the
// worker's peak RSS (VmHWM), and the time until every batch is COMPLETED.
// The API reads at most UPLOAD_MAX_CONCURRENT bodies at once and the worker
// applies at most WORKER_MAX_CONCURRENT_ACTIVITIES batches at once (their
// defaults unless set in the environment); the rest wait.
// --streamed: one generated batch of each size (MiB, just under it), streamed
// from the generator as a chunked POST (never held by this process), to an
// API with the default BATCH_MAX_BYTES and no worker (the batch stays
// ACCEPTED): the API's peak RSS growth over its idle RSS, after a small
// warm-up batch has loaded the validator, and the upload's rate.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { writeBatch } from '../domain/xml/index.ts';
import { generateCreates, writeGeneratedBatch } from './lib/generate.ts';
import { printTable, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, peakRss, startStack } from './lib/stack.ts';
import { chunkedPost } from '../test/support/chunked-post.ts';
import { pollUntil } from '../test/support/poll.ts';

const MB = 2 ** 20;

export async function uploadFigures(uploads: number, entities: number, acceptOnly = false): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-records-uploads-'));
  const files: string[] = [];
  for (let index = 0; index < uploads; index += 1) {
    const file = join(dir, `batch-${index}.xml`);
    // Distinct seeds and localId prefixes: no two batches share an entity UUID or a preferred name.
    await writeGeneratedBatch(file, entities, { batchUuid: randomUUID(), seed: 1000 + index, localIdPrefix: `u${index}e` });
    files.push(file);
  }
  const bytes = readFileSync(files[0]!).length;
  const stack = await startStack('er_bench_uploads', { BATCH_MAX_BYTES: String(1024 * MB) });
  try {
    const apiBefore = peakRss(stack.api.pid!);
    const workerBefore = peakRss(stack.worker.pid!);
    const load = loadavg()[0]!;
    const started = performance.now();
    const submitted = await Promise.all(
      files.map(async (file) => {
        const response = await fetch(`${stack.apiUrl}/api/v2/batches`, {
          method: 'POST',
          headers: { 'content-type': 'application/xml', authorization: `Bearer ${BENCH_TOKEN}` },
          body: readFileSync(file),
        });
        const text = await response.text();
        return { status: response.status, id: response.status === 200 ? (JSON.parse(text) as string) : text };
      }),
    );
    const acceptedSeconds = (performance.now() - started) / 1000;
    const accepted = submitted.filter((s) => s.status === 200);
    const apiPeak = peakRss(stack.api.pid!);
    const settings = `UPLOAD_MAX_CONCURRENT ${stack.env.UPLOAD_MAX_CONCURRENT ?? 'default'}, WORKER_MAX_CONCURRENT_ACTIVITIES ${stack.env.WORKER_MAX_CONCURRENT_ACTIVITIES ?? 'default'}; load average ${load.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`;
    const acceptance: Figure[] = [
      {
        figure: `${uploads} concurrent uploads of ${(bytes / MB).toFixed(0)} MB (${entities.toLocaleString('en')} entities): accepted`,
        value: accepted.length,
        unit: '',
        target: `all ${uploads}`,
        met: accepted.length === uploads,
        note: `all answered after ${acceptedSeconds.toFixed(1)} s; ${submitted
          .filter((s) => s.status !== 200)
          .map((s) => `${s.status} ${String(s.id).slice(0, 80)}`)
          .join('; ')}`,
      },
      {
        figure: 'API peak RSS during the uploads',
        value: apiPeak / MB,
        unit: 'MB',
        target: '≤ 400 MB',
        met: apiPeak <= 400 * MB,
        note: `VmHWM ${(apiBefore / MB).toFixed(0)} MB before; ${settings}`,
      },
    ];
    // --accept-only: the API's side alone (the batches are still applied while the stack stops).
    if (acceptOnly) return acceptance;
    const outcomes = new Map<string, string>();
    await pollUntil(
      async () => {
        for (const { id } of accepted) {
          if (outcomes.has(id)) continue;
          const detail = (await (
            await fetch(`${stack.apiUrl}/api/v2/batches/${id}/detail`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } })
          ).json()) as { status: string };
          if (detail.status === 'COMPLETED' || detail.status === 'FAILED') outcomes.set(id, detail.status);
        }
        return outcomes.size === accepted.length ? true : undefined;
      },
      { timeoutMs: 30 * 60_000, intervalMs: 500, what: `the ${accepted.length} uploaded batches to finish`, retryErrors: false },
    );
    const completedSeconds = (performance.now() - started) / 1000;
    const workerPeak = peakRss(stack.worker.pid!);
    const completed = [...outcomes.values()].filter((s) => s === 'COMPLETED').length;
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));
    return [
      ...acceptance,
      {
        figure: `worker peak RSS applying the ${uploads} batches`,
        value: workerPeak / MB,
        unit: 'MB',
        target: '< 1024 MB, all COMPLETED',
        met: workerPeak < 1024 * MB && completed === uploads,
        note: `VmHWM ${(workerBefore / MB).toFixed(0)} MB before; ${completed}/${accepted.length} COMPLETED, all finished ${completedSeconds.toFixed(0)} s after the first POST`,
      },
    ];
  } finally {
    await stack.stop();
    await dropDatabase(stack.databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** VmRSS now, and VmHWM reset to it (Linux: clear_refs 5), so that a later peakRss is the peak from here on. */
function resetPeak(pid: number): number {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

/** POSTs a generated v2 batch of just under `bytes` bytes, chunked, streamed from the generator. */
async function postGenerated(
  apiUrl: string,
  bytes: number,
  seed: number,
): Promise<{ status: number; answer: string; sent: number; changes: number }> {
  let sent = 0;
  let changes = 0;
  // Room for the last entity (about 1.6 KB) and the closing tag.
  const room = 64 * 1024;
  function* creates() {
    for (const command of generateCreates(Number.MAX_SAFE_INTEGER, { seed, localIdPrefix: `s${seed}e` })) {
      if (sent >= bytes - room) return;
      changes += 1;
      yield command;
    }
  }
  const header = { version: 'v2' as const, batchUuid: randomUUID(), sender: { id: 'bench', name: 'Benchmark' } };
  const post = chunkedPost(new URL('/api/v2/batches', apiUrl), {
    'content-type': 'application/xml',
    authorization: `Bearer ${BENCH_TOKEN}`,
  });
  let pending = '';
  for await (const text of writeBatch(header, creates(), 'v2')) {
    pending += text;
    if (pending.length < 64 * 1024) continue;
    const chunk = Buffer.from(pending);
    pending = '';
    sent += chunk.length;
    await post.write(chunk);
  }
  const last = Buffer.from(pending);
  sent += last.length;
  post.request.end(last);
  return { ...(await post.answered), sent, changes };
}

export async function streamedUploadFigures(sizesMiB: readonly number[]): Promise<Figure[]> {
  const stack = await startStack('er_bench_streamed_uploads');
  const figures: Figure[] = [];
  try {
    // The batches stay ACCEPTED: applying a 1 GiB batch is the worker's benchmark (bench:ingest), not this one.
    await stack.killWorker();
    const pid = stack.api.pid!;
    const coldRss = resetPeak(pid);
    const warmUp = await postGenerated(stack.apiUrl, 256 * 1024, 1);
    if (warmUp.status !== 200) throw new Error(`warm-up batch: ${warmUp.status} ${warmUp.answer.slice(0, 200)}`);
    for (const [index, size] of sizesMiB.entries()) {
      const idle = resetPeak(pid);
      const load = loadavg()[0]!;
      const started = performance.now();
      const upload = await postGenerated(stack.apiUrl, size * MB, 100 + index);
      const seconds = (performance.now() - started) / 1000;
      const growth = peakRss(pid) - idle;
      figures.push({
        figure: `API peak RSS growth, one streamed ${(upload.sent / MB).toFixed(0)} MiB upload (${upload.changes.toLocaleString('en')} entities)`,
        value: growth / MB,
        unit: 'MB',
        target: '≤ 100 MB, accepted',
        met: growth <= 100 * MB && upload.status === 200,
        note: `answer ${upload.status} ${upload.answer.slice(0, 80)}; idle RSS ${(idle / MB).toFixed(0)} MB (${(coldRss / MB).toFixed(0)} MB before the warm-up batch); ${seconds.toFixed(0)} s, ${(upload.sent / MB / seconds).toFixed(1)} MB/s; load average ${load.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`,
      });
    }
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));
    return figures;
  } finally {
    await stack.stop();
    await dropDatabase(stack.databaseUrl);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      uploads: { type: 'string', default: '12' },
      entities: { type: 'string', default: '30000' },
      'accept-only': { type: 'boolean', default: false },
      streamed: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const figures = values.streamed
    ? await streamedUploadFigures(values.streamed.split(',').map(Number))
    : await uploadFigures(Number(values.uploads), Number(values.entities), values['accept-only']);
  printTable(figures);
  if (values.json) writeFileSync(values.json, JSON.stringify(figures, null, 2));
}
