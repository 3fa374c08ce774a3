// `npm run db:reset` empties only a database on this machine. What it does to
// a running service's database is proven by walkthrough.test.ts, which runs
// it first in every pass of the README's commands.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isLocalDatabase } from '../../db/reset.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('db:reset', () => {
  it('takes localhost, 127.0.0.1, ::1 and a Unix socket as this machine, and no other host', () => {
    for (const url of [
      'postgres://localhost:5432/entity_records',
      'postgres://127.0.0.1/x',
      'postgres://[::1]:5432/x',
      'postgresql:///x?host=/var/run/postgresql',
      'postgres://localhost/x?host=/tmp',
    ]) {
      expect(isLocalDatabase(url), url).toBe(true);
    }
    for (const url of ['postgres://db.example.org/x', 'postgres://10.0.0.5:5432/x', 'postgres://localhost/x?host=db.example.org']) {
      expect(isLocalDatabase(url), url).toBe(false);
    }
  });

  it('refuses a database on another machine, naming it, and touches nothing', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'npm',
        ['run', '--silent', 'db:reset'],
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: 'postgres://db.example.org:5432/records' } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'db:reset empties only a database on this machine; DATABASE_URL names database records on db.example.org:5432',
    );
    expect(run.stdout).toBe('');
  });
});
