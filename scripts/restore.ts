// npm run db:restore -- FILE [--gap N] [--issued-up-to N]
//
// Restores a backup into DATABASE_URL, which must name a fresh (absent or
// empty) database, then moves the record numbers past anything the registry
// can have issued since the backup: past the backup's highest number by
// --gap (default RESTORE_RECORD_NUMBER_GAP, 10,000,000), and past
// --issued-up-to when the last number the lost database issued is known.
// Numbers are never given twice. Last, every table is analyzed: pg_restore
// leaves the planner no statistics, and a registry read with none can plan
// sequential scans of every record. Then point the APIs and workers at it.
// See docs/deployment.md, "Backup and restore".
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { analyzeEveryTable } from '../db/analyze.ts';
import { restoreDatabase } from '../db/backup.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { gap: { type: 'string' }, 'issued-up-to': { type: 'string' } },
});
const [file] = positionals;
if (!file) {
  process.stderr.write('usage: npm run db:restore -- FILE [--gap N] [--issued-up-to N]\n');
  process.exit(2);
}
const config = loadConfig();
const gap = values.gap === undefined ? config.RESTORE_RECORD_NUMBER_GAP : Number(values.gap);
const issuedUpTo = values['issued-up-to'] === undefined ? undefined : Number(values['issued-up-to']);
if (!Number.isSafeInteger(gap) || gap < 0 || (issuedUpTo !== undefined && !Number.isSafeInteger(issuedUpTo))) {
  process.stderr.write('--gap and --issued-up-to take whole numbers\n');
  process.exit(2);
}
const outcome = await restoreDatabase(config.DATABASE_URL, file, { gap, issuedUpTo });
const analyzed = await analyzeEveryTable(config.DATABASE_URL);
process.stdout.write(
  `restored ${file} into ${new URL(config.DATABASE_URL).pathname.slice(1)}: highest record number in the backup ${outcome.highestInBackup}; the next new record gets ${outcome.nextRecordNumber}; ${analyzed} tables analyzed\n`,
);
