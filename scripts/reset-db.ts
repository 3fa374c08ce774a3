// `npm run db:reset`: empties the local database (DATABASE_URL, as `npm start`
// uses it) for a fresh start, for example to run the README's walkthrough
// again. The service may keep running. A database on another machine is
// refused: this is for the one a developer's own `npm start` fills.
import { loadConfig } from '../config.ts';
import { ensureDatabase, openOrm } from '../db/orm.ts';
import { isLocalDatabase, resetDatabase } from '../db/reset.ts';
import { directoryExportStore } from '../services/exports/files.ts';

const config = loadConfig();
const url = new URL(config.DATABASE_URL);
const database = decodeURIComponent(url.pathname.slice(1));
if (!isLocalDatabase(config.DATABASE_URL)) {
  process.stderr.write(`db:reset empties only a database on this machine; DATABASE_URL names database ${database} on ${url.host}\n`);
  process.exit(1);
}
await ensureDatabase(config.DATABASE_URL);
const orm = await openOrm(config.DATABASE_URL);
try {
  const removed = await resetDatabase(orm);
  const store = directoryExportStore(config.exportDir);
  for (const id of removed.exportIds) await store.remove(id);
  process.stdout.write(
    `database ${database} is empty again: ${removed.entities} records, ${removed.batches} batches and ${removed.exportIds.length} exports (with their files) removed\n`,
  );
  // A development tool: a registry in service is restored (npm run db:restore), never reset, so that no number is given twice.
  process.stdout.write(
    'record numbers start at 1 again: a development tool, never for a registry whose numbers clients hold (see npm run db:restore)\n',
  );
} finally {
  await orm.close();
}
