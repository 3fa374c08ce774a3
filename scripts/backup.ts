// npm run db:backup -- FILE
//
// A backup of the service's database (DATABASE_URL) while it runs: one
// consistent snapshot, in pg_dump's custom format. See docs/deployment.md,
// "Backup and restore".
import { loadConfig } from '../config.ts';
import { backupDatabase } from '../db/backup.ts';

const [file] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npm run db:backup -- FILE\n');
  process.exit(2);
}
const config = loadConfig();
await backupDatabase(config.DATABASE_URL, file);
process.stdout.write(`backup of ${new URL(config.DATABASE_URL).pathname.slice(1)} written to ${file}\n`);
