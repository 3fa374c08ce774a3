import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// A client connection closed while one of its calls waits to be retried (Temporal away, an API or worker stopping):
// the SDK's retry timer outlives Connection.close() and throws "Channel has been shut down" in that timer, uncaught.
// Each case runs in a process of its own, which such an error would end.

const run = promisify(execFile);
const LAZY_CONNECTION = fileURLToPath(new URL('../../temporal/client/lazy-connection.ts', import.meta.url));

/** A local port nothing listens on: a call there fails UNAVAILABLE, which the SDK retries. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts a call to `port`, closes the connection while the call's retry is scheduled, then waits past every retry. */
function closingScript(port: number, plainSdk: boolean): string {
  const open = plainSdk
    ? `const { Connection } = await import('@temporalio/client');
       const connection = Connection.lazy({ address: '127.0.0.1:${port}' });
       const close = () => connection.close();`
    : `const { lazyClientConnection } = await import(${JSON.stringify(LAZY_CONNECTION)});
       const { connection, close } = lazyClientConnection({ temporalAddress: '127.0.0.1:${port}' });`;
  return `${open}
    const { Client } = await import('@temporalio/client');
    const client = new Client({ connection });
    const call = client.workflowService.getSystemInfo({}).then(() => 'answered', (error) => 'failed: ' + error.code);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await close();
    console.log('closed; the call ' + (await call));
    // Past the longest retry interval (5 s and its jitter).
    await new Promise((resolve) => setTimeout(resolve, 7000));
    console.log('alive');`;
}

async function runScript(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('closing a client connection to Temporal while a call waits to be retried', () => {
  it("ends the process with the SDK's own connection (why lazyClientConnection exists; if this passes, the SDK clears its retries and the workaround can go)", async () => {
    const result = await runScript(closingScript(await closedPort(), true));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Channel has been shut down');
  }, 40_000);

  it('closes lazyClientConnection after the scheduled retry, and the process lives on', async () => {
    const result = await runScript(closingScript(await closedPort(), false));
    expect(result.stderr).not.toContain('Channel has been shut down');
    expect(result.stdout).toContain('closed; the call failed: 14');
    expect(result.stdout).toContain('alive');
    expect(result.code).toBe(0);
  }, 40_000);
});
