// Benchmark of batch validation against xmllint.
//
//   npm run bench:validate [-- --mb 50 --runs 3]
//
// Writes a v2 batch of about `--mb` MB from the one data generator
// (bench/lib/generate.ts: three parts of eight items, Czech names) to a
// temporary file, validates it with validateBatchXml in a child process (so
// that its peak RSS is its own) and with `xmllint --noout --schema`, each
// `--runs` times, alternated, and prints the medians (bench/lib/report.ts).
// Targets: at most twice xmllint's time, peak RSS at most four times the
// file size, and every hostile document (entity bomb, XXE, deep nesting,
// invalid UTF-8, truncation) refused within 300 ms. Exits 1 when a target is
// missed. validationFigures() is what `npm run bench` calls.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serializeBatch } from '../domain/xml/index.ts';
import { generateCreates, writeGeneratedBatch } from './lib/generate.ts';
import { median, printTable, runsNote, type Figure } from './lib/report.ts';

const SCHEMA = fileURLToPath(new URL('../schemas/entity-records-2025.xsd', import.meta.url));
const MB = 1024 * 1024;

// ---- the batch ----

/** Writes a batch of the one data generator (bench/lib/generate.ts) of about `targetBytes`; returns the number of entities. */
async function writeBatch(path: string, targetBytes: number): Promise<number> {
  const sample = 500;
  const sampleBytes = Buffer.byteLength(
    serializeBatch({ version: 'v2', sender: { id: 'bench', name: 'Benchmark' } }, generateCreates(sample), 'v2'),
  );
  const count = Math.max(1, Math.ceil((targetBytes * sample) / sampleBytes));
  await writeGeneratedBatch(path, count, { batchUuid: randomUUID() });
  return count;
}

// ---- measurement ----

interface Measurement {
  seconds: number;
  peakRssBytes: number | undefined;
}

/** Child mode: validate once and report time and this process's peak RSS. */
async function child(file: string): Promise<void> {
  const { validateBatchXml } = await import('../engine/validation/index.ts');
  // Load the wasm module and compile the schemas first: a running service has done so.
  await validateBatchXml(
    Buffer.from('<batchUpdate xmlns="http://cam.tacr.cz/2025"><info><sender><id>u</id><name>n</name></sender></info></batchUpdate>'),
  );
  const xml = readFileSync(file);
  const started = performance.now();
  await validateBatchXml(xml);
  const seconds = (performance.now() - started) / 1000;
  const result: Measurement = { seconds, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
  process.stdout.write(JSON.stringify(result));
}

function measureValidator(file: string): Measurement {
  const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`validator failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Measurement;
}

const TIME = '/usr/bin/time';

function measureXmllint(file: string, extra: string[]): Measurement {
  const args = [...extra, '--noout', '--schema', SCHEMA, file];
  if (existsSync(TIME)) {
    const run = spawnSync(TIME, ['-f', '%e %M', 'xmllint', ...args], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`xmllint failed: ${run.stderr}`);
    const [seconds, kilobytes] = (run.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
    return { seconds: seconds ?? Number.NaN, peakRssBytes: (kilobytes ?? Number.NaN) * 1024 };
  }
  const started = performance.now();
  const run = spawnSync('xmllint', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`xmllint failed: ${run.stderr}`);
  return { seconds: (performance.now() - started) / 1000, peakRssBytes: undefined };
}

function hasXmllint(): boolean {
  return spawnSync('xmllint', ['--version']).status === 0;
}

// ---- refusals ----

const V2 = 'http://cam.tacr.cz/2025';
const REFUSAL_TARGET_MS = 300;

/** The hostile documents test/engine/validation.test.ts checks the errors of; here, how fast each is refused. */
function hostileDocuments(): [string, Uint8Array][] {
  const utf8 = (text: string) => Buffer.from(text);
  const minimal = `<batchUpdate xmlns="${V2}"><info><sender><id>u</id><name>Jana</name></sender></info></batchUpdate>`;
  const laughs = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
  const [head, tail] = minimal.split('Jana') as [string, string];
  return [
    [
      'entity bomb',
      utf8(
        `<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 "lol">\n${laughs}\n]>\n${minimal.replace('<id>u</id>', '<id>&lol9;</id>')}`,
      ),
    ],
    [
      'external entity',
      utf8(
        `<?xml version="1.0"?>\n<!DOCTYPE batchUpdate [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n${minimal.replace('<id>u</id>', '<id>&xxe;</id>')}`,
      ),
    ],
    ['10,000 levels of nesting', utf8(`<batchUpdate xmlns="${V2}">${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</batchUpdate>`)],
    ['invalid UTF-8', Buffer.concat([utf8(head), Buffer.from([0xc3, 0x28]), utf8(tail)])],
    ['truncated', utf8(minimal.slice(0, -20))],
  ];
}

/** The slowest refusal of a hostile document (median of `runs` each), in this process after a warm-up. */
export async function refusalFigure(runs: number): Promise<Figure> {
  const { validateBatchXml } = await import('../engine/validation/index.ts');
  await validateBatchXml(Buffer.from(`<batchUpdate xmlns="${V2}"><info><sender><id>u</id><name>n</name></sender></info></batchUpdate>`));
  const medians: [string, number][] = [];
  for (const [name, document] of hostileDocuments()) {
    const times: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      const started = performance.now();
      const refused = await validateBatchXml(document).then(
        () => false,
        () => true,
      );
      times.push(performance.now() - started);
      if (!refused) throw new Error(`validate: the hostile document "${name}" was accepted`);
    }
    medians.push([name, median(times)]);
  }
  const [slowestName, slowest] = medians.reduce((a, b) => (b[1] > a[1] ? b : a));
  return {
    figure: `hostile documents refused (slowest of ${medians.length})`,
    value: slowest,
    unit: 'ms',
    target: `≤ ${REFUSAL_TARGET_MS} ms each`,
    met: slowest <= REFUSAL_TARGET_MS,
    note: `${slowestName}; ${medians.map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ')} ms (median of ${runs})`,
  };
}

/**
 * Validation + reading of a generated batch of about `mb` MB, `runs` times,
 * beside `xmllint --schema` (and --stream, for the note): median time, peak
 * RSS (the largest of the runs).
 */
export async function validationFigures(mb: number, runs: number): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ers-bench-'));
  try {
    const file = join(dir, 'batch.xml');
    const entities = await writeBatch(file, mb * MB);
    const size = statSync(file).size;
    process.stderr.write(`validate: batch of ${(size / MB).toFixed(1)} MB, ${entities} createEntity, ${runs} runs\n`);
    const ours: Measurement[] = [];
    const lint: Measurement[] = [];
    const lintStream: Measurement[] = [];
    const xmllint = hasXmllint();
    if (!xmllint) process.stderr.write('validate: xmllint not found (Debian: apt-get install libxml2-utils); no baseline\n');
    // Alternated, so that both see the same background load on average.
    for (let run = 0; run < runs; run += 1) {
      ours.push(measureValidator(file));
      if (xmllint) {
        lint.push(measureXmllint(file, []));
        lintStream.push(measureXmllint(file, ['--stream']));
      }
    }
    const seconds = median(ours.map((m) => m.seconds));
    const reference = xmllint ? median(lint.map((m) => m.seconds)) : undefined;
    const peak = Math.max(...ours.map((m) => m.peakRssBytes ?? Number.POSITIVE_INFINITY));
    const lintPeaks = lint.map((m) => m.peakRssBytes).filter((value): value is number => value !== undefined);
    const label = `${(size / MB).toFixed(0)} MB batch (${entities.toLocaleString('en')} entities)`;
    return [
      await refusalFigure(runs),
      {
        figure: `XSD validation + reading, ${label}`,
        value: seconds,
        unit: 's',
        baseline: reference,
        baselineName: 'xmllint --schema',
        target: '≤ 2× xmllint --schema',
        met: reference === undefined ? false : seconds <= 2 * reference,
        note: `${(size / MB / seconds).toFixed(1)} MB/s; ${runsNote(
          ours.map((m) => m.seconds),
          's',
        )}${xmllint ? `; xmllint --stream ${median(lintStream.map((m) => m.seconds)).toFixed(2)} s` : '; no xmllint'}`,
      },
      {
        figure: `validator peak RSS, ${(size / MB).toFixed(0)} MB batch`,
        value: peak / MB,
        unit: 'MB',
        baseline: lintPeaks.length > 0 ? Math.max(...lintPeaks) / MB : undefined,
        baselineName: 'xmllint --schema',
        target: '≤ 4× file size',
        met: peak <= 4 * size,
        note: `${(peak / size).toFixed(1)}× the file`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { mb: { type: 'string', default: '50' }, runs: { type: 'string', default: '3' } } });
  const figures = await validationFigures(Number(values.mb), Number(values.runs));
  printTable(figures);
  if (figures.some((figure) => !figure.met)) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--child') await child(process.argv[3] as string);
  else await main();
}
