import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';

// `npm start` checks every port it is about to bind before it starts
// anything, and names each busy one with the variable that moves it: one
// try tells a reader everything to change.
describe('npm start on busy ports', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  async function occupied(): Promise<number> {
    const server = createServer();
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  }

  async function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../../scripts/start.ts', import.meta.url))], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: inject('databaseUrl'),
        DATA_DIR: join(inject('scratchDir'), 'start-ports'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, output };
  }

  it('names every busy port at once, each with its variable, and starts nothing', async () => {
    const [api, temporal, ui, metrics] = [await occupied(), await occupied(), await occupied(), await occupied()];
    const { code, output } = await start({
      PORT: String(api),
      TEMPORAL_PORT: String(temporal),
      TEMPORAL_UI_PORT: String(ui),
      WORKER_METRICS_PORT: String(metrics),
    });
    expect(code).toBe(1);
    expect(output).toMatch(new RegExp(`port ${api} .*the API.* set PORT to another port`));
    expect(output).toMatch(new RegExp(`port ${temporal} .*Temporal dev server.* set TEMPORAL_PORT to another port`));
    expect(output).toMatch(new RegExp(`port ${ui} .*Web UI.* set TEMPORAL_UI_PORT to another port`));
    expect(output).toMatch(new RegExp(`port ${metrics} .*worker metrics.* set WORKER_METRICS_PORT to another port`));
    expect(output).not.toMatch(/Temporal dev server at|database ready/);
  });

  it('refuses two settings that choose the same port', async () => {
    const free = await occupied();
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const { code, output } = await start({ PORT: String(free), TEMPORAL_PORT: String(free), TEMPORAL_UI_PORT: String(await occupied()) });
    expect(code).toBe(1);
    expect(output).toContain(`PORT and TEMPORAL_PORT both choose port ${free}`);
    expect(output).toMatch(/set TEMPORAL_UI_PORT to another port/);
  });
});
