import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * One value in COPY's text format: NULL is \N; backslash, newline, carriage
 * return and tab are escaped (the only characters the format reserves).
 */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  const text = value instanceof Date ? value.toISOString() : String(value);
  return /[\\\n\r\t]/.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t')) : text;
}

const FLUSH_CHARACTERS = 256 * 1024;

/**
 * Loads rows with COPY FROM STDIN on the caller's connection (and so inside
 * its transaction): the fastest way PostgreSQL takes rows, with backpressure
 * so memory holds one chunk, not the whole load.
 */
export async function copyRows(client: pg.PoolClient, table: string, columns: readonly string[], rows: Iterable<readonly unknown[]>): Promise<void> {
  const stream = client.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`));
  let buffer = '';
  for (const row of rows) {
    buffer += `${row.map(copyValue).join('\t')}\n`;
    if (buffer.length >= FLUSH_CHARACTERS) {
      if (!stream.write(buffer)) await once(stream, 'drain');
      buffer = '';
    }
  }
  stream.end(buffer);
  await finished(stream);
}
