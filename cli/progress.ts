import cliProgress from 'cli-progress';

export interface Progress {
  update(value: number, payload?: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

/**
 * A progress bar on stderr. cli-progress draws nothing when stderr is not a
 * terminal (noTTYOutput: false), so pipes, logs and tests see no bars.
 */
export function startProgress(format: string, total: number, payload: Record<string, string | number> = {}): Progress {
  const bar = new cliProgress.SingleBar(
    { format, stream: process.stderr, noTTYOutput: false, hideCursor: false, gracefulExit: false, barsize: 30 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, payload);
  // A bar turns off line wrapping; Ctrl-C must restore the terminal before the conventional exit.
  const interrupted = () => {
    bar.stop();
    process.stderr.write('\n');
    process.exit(130);
  };
  if (process.stderr.isTTY) process.once('SIGINT', interrupted);
  return {
    update: (value, values) => bar.update(value, values),
    setTotal: (value) => bar.setTotal(value),
    stop: () => {
      process.off('SIGINT', interrupted);
      bar.stop();
    },
  };
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}
