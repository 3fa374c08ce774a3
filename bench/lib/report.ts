// One table format for every benchmark: figure, value, baseline, ratio, target, met.

export interface Figure {
  figure: string;
  value: number;
  unit: string;
  baseline?: number;
  baselineName?: string;
  target: string;
  met: boolean;
  /** Shown for context only (no target of its own): neither met nor missed, and not counted in the headline. */
  info?: boolean;
  note?: string;
}

/** (max - min) / median of repeated measurements; 0 for a single one. */
function spread(values: number[]): number {
  if (values.length < 2) return 0;
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/** The note for a figure measured `values.length` times: median of n, spread. */
export function runsNote(values: number[], unit = ''): string {
  if (values.length < 2) return '1 run';
  return `median of ${values.length}, spread ${(spread(values) * 100).toFixed(0)}% (${values.map((v) => format(v)).join(' / ')}${unit ? ` ${unit}` : ''})`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const format = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));

export function printTable(figures: Figure[]): void {
  const rows = figures.map((f) => [
    f.figure,
    `${format(f.value)} ${f.unit}`,
    f.baseline === undefined ? '' : `${format(f.baseline)} ${f.unit} (${f.baselineName ?? 'baseline'})`,
    f.baseline === undefined ? '' : `${(f.value / f.baseline).toFixed(2)}×`,
    f.target,
    f.info ? '-' : f.met ? 'met' : 'NOT met',
    f.note ?? '',
  ]);
  const header = ['figure', 'value', 'baseline', 'ratio', 'target', 'status', 'note'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(`${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${rows.map(line).join('\n')}\n`);
}
