// The export rows live in db/exports.ts (deps.db.exports); the row type is
// re-exported here for services/exports/write.ts until it imports it there.
export type { ExportRow } from '../../db/exports.ts';
