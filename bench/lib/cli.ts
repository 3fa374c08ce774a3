// A benchmark run on its own command (`npm run bench:reads -- --entities 100000`)
// rather than imported by bench/run.ts: its options, and its table.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { printTable, type Figure } from './report.ts';

/** Whether `meta`'s module is the script node was started with, not a module bench/run.ts imported. */
export function isScript(meta: ImportMeta): boolean {
  return meta.url === `file://${process.argv[1]}`;
}

/** The 1-, 5- and 15-minute load averages, as /proc/loadavg has them. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/**
 * The command's --options: each of `defaults` a string option with that
 * default, each of `optional` a string option with none, each of `flags` a
 * boolean, false unless given.
 */
export function commandOptions<Named extends string, Optional extends string = never, Flag extends string = never>(
  defaults: Record<Named, string>,
  more: { optional?: readonly Optional[]; flags?: readonly Flag[] } = {},
): Record<Named, string> & Partial<Record<Optional, string>> & Record<Flag, boolean> {
  const options = {
    ...Object.fromEntries(Object.entries<string>(defaults).map(([name, value]) => [name, { type: 'string' as const, default: value }])),
    ...Object.fromEntries((more.optional ?? []).map((name) => [name, { type: 'string' as const }])),
    ...Object.fromEntries((more.flags ?? []).map((name) => [name, { type: 'boolean' as const, default: false }])),
  };
  return parseArgs({ options }).values as Record<Named, string> & Partial<Record<Optional, string>> & Record<Flag, boolean>;
}

/**
 * Measures, then prints the table and the load average before and after;
 * with `json`, writes them to that file too. A missed target sets exit code 1.
 */
export async function reportFigures(json: string | undefined, measure: () => Promise<Figure[]>): Promise<void> {
  const loadBefore = loadAverage();
  const figures = await measure();
  const loadAfter = loadAverage();
  printTable(figures);
  process.stdout.write(`load average before: ${loadBefore}; after: ${loadAfter}\n`);
  if (json) writeFileSync(json, JSON.stringify({ loadBefore, loadAfter, figures }, null, 2));
  if (figures.some((figure) => !figure.info && !figure.met)) process.exitCode = 1;
}
