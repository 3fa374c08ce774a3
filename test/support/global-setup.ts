// One Temporal dev server (the installed binary, never a download) and one
// fresh PostgreSQL database per test run, shared by the integration tests.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { ensureTemporalBinary } from '../../scripts/lib/temporal-binary.ts';
import { startDevServer, type DevServer } from '../../scripts/lib/temporal-server.ts';
import { registerSearchAttributes } from '../../temporal/client/register.ts';
import { buildWorkflowBundle } from '../../worker/bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    databaseUrl: string;
    workflowBundlePath: string;
    scratchDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratchDir = mkdtempSync(join(tmpdir(), 'entity-records-test-'));
  const baseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';
  const url = new URL(baseUrl);
  url.pathname = `/er_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  const databaseUrl = url.toString();

  const [server] = await Promise.all([
    startDevServer({
      binary: ensureTemporalBinary(),
      dbFile: join(scratchDir, 'temporal.db'),
      port: await freePort(),
      logFile: join(scratchDir, 'temporal.log'),
    }),
    (async () => {
      await ensureDatabase(databaseUrl);
      const orm = await openOrm(databaseUrl);
      await migrate(orm);
      await orm.close();
    })(),
  ]);
  const devServer: DevServer = server;
  // What api/main.ts does at start; the tests build the app in-process.
  const connection = await Connection.connect({ address: devServer.address });
  await registerSearchAttributes(connection, 'default');
  await connection.close();

  const workflowBundlePath = join(scratchDir, 'workflow-bundle.js');
  await buildWorkflowBundle(workflowBundlePath);

  project.provide('temporalAddress', devServer.address);
  project.provide('databaseUrl', databaseUrl);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('scratchDir', scratchDir);

  return async () => {
    await devServer.stop();
    const admin = new URL(withDatabaseUser(databaseUrl));
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`drop database if exists ${pg.escapeIdentifier(url.pathname.slice(1))} with (force)`);
    await client.end();
    rmSync(scratchDir, { recursive: true, force: true });
  };
}
