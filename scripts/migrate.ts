// Creates the database when missing and applies pending migrations; used by
// `npm start`, the docker-compose `migrate` service and `npm run db:migrate`.
import { loadConfig } from '../config.ts';
import { ensureDatabase, migrate, openOrm } from '../db/orm.ts';

const config = loadConfig();
await ensureDatabase(config.DATABASE_URL);
const orm = await openOrm(config.DATABASE_URL);
try {
  await migrate(orm);
} finally {
  await orm.close();
}
process.stdout.write('migrations applied\n');
