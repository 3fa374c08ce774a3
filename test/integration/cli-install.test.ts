// The CLI on PATH, as the README puts it there: `npm link` (here into a
// temporary global prefix, so the machine's own stays untouched), then
// `entity-records` from another folder, in a shell whose PATH has no npm
// bin folders and whose `node` may be too old: bin/entity-records brings
// the project's Node, and nothing in between prints npm's warnings.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const prefix = mkdtempSync(join(tmpdir(), 'entity-records-npm-prefix-'));
const elsewhere = mkdtempSync(join(tmpdir(), 'entity-records-elsewhere-'));
const plainPath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((entry) => !entry.includes('node_modules'))
  .join(delimiter);

afterAll(() => {
  rmSync(prefix, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

describe('entity-records on PATH', () => {
  it("is linked by npm link and runs from any folder on the project's Node, without warnings", () => {
    const link = spawnSync('npm', ['link', '--no-audit', '--no-fund'], {
      cwd: ROOT,
      env: { ...process.env, PATH: plainPath, NPM_CONFIG_PREFIX: prefix },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(link.status, link.stderr).toBe(0);
    const bin = join(prefix, 'bin');
    expect(existsSync(join(bin, 'entity-records'))).toBe(true);

    const run = spawnSync('entity-records', ['--version'], {
      cwd: elsewhere,
      env: { HOME: elsewhere, PATH: `${bin}${delimiter}${plainPath}` },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(packageJson.version);
    expect(run.stderr).toBe('');
  });

  it('runs through bin/entity-records directly, also from another folder', () => {
    const run = spawnSync(join(ROOT, 'bin', 'entity-records'), ['--help'], {
      cwd: elsewhere,
      env: { HOME: elsewhere, PATH: plainPath },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('Usage: entity-records');
    expect(run.stderr).toBe('');
  });
});
