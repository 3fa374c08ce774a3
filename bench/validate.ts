// Benchmark of batch validation against xmllint.
//
//   npm run bench:validate [-- --mb 50 --runs 3]
//
// Writes a v2 batch of about `--mb` MB (createEntity elements with three
// parts of eight items, Czech names) to a temporary file, validates it with
// validateBatchXml in a child process (so that its peak RSS is its own) and
// with `xmllint --noout --schema`, and prints time and memory. Targets: at
// most twice xmllint's time, peak RSS at most four times the file size.
// Exits 1 when a target is missed.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const SCHEMA = fileURLToPath(new URL('../schemas/entity-records-2025.xsd', import.meta.url));
const MB = 1024 * 1024;

// ---- generator ----

const FIRST_NAMES = ['Antonín', 'Božena', 'Jiří', 'Květoslava', 'Přemysl', 'Šárka', 'Čeněk', 'Žofie', 'Ludmila', 'Vojtěch'];
const SURNAMES = ['Dvořák', 'Němcová', 'Čapek', 'Hašek', 'Štěpánek', 'Řezníček', 'Žižka', 'Kočí', 'Procházková', 'Veselý'];
const PLACES = ['Nelahozeves', 'Česká Skalice', 'Malé Svatoňovice', 'Lipnice nad Sázavou', 'Třeboň', 'Žďár nad Sázavou'];

function createEntity(i: number): string {
  const first = FIRST_NAMES[i % FIRST_NAMES.length];
  const surname = SURNAMES[(i * 7) % SURNAMES.length];
  const place = PLACES[i % PLACES.length];
  const year = 1800 + (i % 200);
  return `  <createEntity localId="e${i}" entityType="PERSON_INDIVIDUAL" entityUuid="${randomUUID()}">
    <parst>
      <part type="PT_NAME" partUuid="${randomUUID()}">
        <items>
          <string type="NM_MAIN">${surname}</string>
          <string type="NM_MINOR">${first}</string>
          <enum type="NM_TYPE" spec="NT_ACTUAL"/>
          <string type="NM_SUP_GEN">${first} ${surname} (${year})</string>
          <int type="NM_ORDER">${i % 10}</int>
          <boolean type="NM_PREFERRED">true</boolean>
          <unitDate type="NM_VALID" from="${year}-01-01T00:00:00" to="${year + 60}-12-31T23:59:59" format="Y-Y"/>
          <link type="SRC_LINK"><url>https://example.cz/osoby/${i}</url><name>Záznam č. ${i}</name></link>
        </items>
      </part>
      <part type="PT_BODY" partUuid="${randomUUID()}">
        <items>
          <string type="BRIEF_DESC">Český malíř a grafik, žák Akademie výtvarných umění v Praze.</string>
          <enum type="GENDER" spec="GT_${i % 2 === 0 ? 'MALE' : 'FEMALE'}"/>
          <string type="NOTE">Poznámka k záznamu ${i}: působil v obci ${place}.</string>
          <int type="SORT_KEY">${i}</int>
          <boolean type="IS_PUBLIC">false</boolean>
          <string type="HISTORY">Narodil se v obci ${place}, studoval v Praze a ve Vídni.</string>
          <string type="SOURCE_INFO">Biografický slovník českých zemí, sešit ${i % 30}.</string>
          <enum type="LANGUAGE" spec="LNG_cze"/>
        </items>
      </part>
      <part type="PT_CRE" partUuid="${randomUUID()}">
        <items>
          <unitDate type="CRE_DATE" from="${year}-09-08T00:00:00" to="${year}-09-08T23:59:59" format="D"/>
          <enum type="CRE_CLASS" spec="CRC_BIRTH"/>
          <string type="CRE_PLACE">${place}</string>
          <binary type="CRE_SCAN">UEsDBBQAAAAIAGZ3TVcAAAAA</binary>
          <int type="CRE_YEAR">${year}</int>
          <boolean type="CRE_CERTAIN">true</boolean>
          <link type="CRE_LINK"><url>https://example.cz/matriky/${i}</url></link>
          <string type="CRE_NOTE">Křest v kostele sv. Ondřeje.</string>
        </items>
      </part>
    </parst>
  </createEntity>
`;
}

/** Writes a batch of at least `targetBytes`; returns the number of entities. */
function writeBatch(path: string, targetBytes: number): number {
  const fd = openSync(path, 'w');
  try {
    let written = writeSync(fd, `<?xml version="1.0" encoding="UTF-8"?>
<batchUpdate xmlns="http://cam.tacr.cz/2025">
  <info uuid="${randomUUID()}"><sender><id>bench</id><name>Zkušební Uživatel</name></sender></info>
`);
    let count = 0;
    let buffered = '';
    while (written < targetBytes) {
      buffered += createEntity(++count);
      if (buffered.length > MB) {
        written += writeSync(fd, buffered);
        buffered = '';
      }
    }
    writeSync(fd, `${buffered}</batchUpdate>\n`);
    return count;
  } finally {
    closeSync(fd);
  }
}

// ---- measurement ----

interface Measurement {
  seconds: number;
  peakRssBytes: number | undefined;
}

/** Child mode: validate once and report time and this process's peak RSS. */
async function child(file: string): Promise<void> {
  const { validateBatchXml } = await import('../domain/validation/index.ts');
  // Load the wasm module and compile the schemas first: a running service has done so.
  await validateBatchXml(Buffer.from('<batchUpdate xmlns="http://cam.tacr.cz/2025"><info><sender><id>u</id><name>n</name></sender></info></batchUpdate>'));
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

function best(runs: number, measure: () => Measurement): Measurement {
  const all = Array.from({ length: runs }, measure);
  const seconds = Math.min(...all.map((m) => m.seconds));
  const peaks = all.map((m) => m.peakRssBytes).filter((peak): peak is number => peak !== undefined);
  return { seconds, peakRssBytes: peaks.length > 0 ? Math.max(...peaks) : undefined };
}

function hasXmllint(): boolean {
  return spawnSync('xmllint', ['--version']).status === 0;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { mb: { type: 'string', default: '50' }, runs: { type: 'string', default: '3' } } });
  const dir = mkdtempSync(join(tmpdir(), 'ers-bench-'));
  try {
    const file = join(dir, 'batch.xml');
    const entities = writeBatch(file, Number(values.mb) * MB);
    const size = statSync(file).size;
    console.log(`batch: ${(size / MB).toFixed(1)} MB, ${entities} createEntity, best of ${values.runs} runs\n`);

    const runs = Number(values.runs);
    const rows: [string, Measurement][] = [['validateBatchXml', best(runs, () => measureValidator(file))]];
    if (hasXmllint()) {
      rows.push(['xmllint --schema', best(runs, () => measureXmllint(file, []))]);
      rows.push(['xmllint --stream --schema', best(runs, () => measureXmllint(file, ['--stream']))]);
    } else {
      console.log('xmllint not found (Debian: apt-get install libxml2-utils); no comparison\n');
    }

    const reference = rows[1]?.[1];
    const table = rows.map(([name, m]) => ({
      tool: name,
      seconds: m.seconds.toFixed(2),
      'MB/s': (size / MB / m.seconds).toFixed(1),
      'peak RSS MB': m.peakRssBytes === undefined ? '?' : (m.peakRssBytes / MB).toFixed(0),
      'RSS / file': m.peakRssBytes === undefined ? '?' : `${(m.peakRssBytes / size).toFixed(1)}x`,
      'time / xmllint': reference ? `${(m.seconds / reference.seconds).toFixed(2)}x` : '-',
    }));
    console.table(table);

    const [, ours] = rows[0] as [string, Measurement];
    const rssRatio = (ours.peakRssBytes ?? Number.POSITIVE_INFINITY) / size;
    const checks: [string, boolean][] = [[`peak RSS ${rssRatio.toFixed(1)}x file size (target <= 4x)`, rssRatio <= 4]];
    if (reference) {
      const timeRatio = ours.seconds / reference.seconds;
      checks.push([`time ${timeRatio.toFixed(2)}x xmllint --schema (target <= 2x)`, timeRatio <= 2]);
    }
    for (const [text, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
    if (checks.some(([, ok]) => !ok)) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as string);
else await main();
