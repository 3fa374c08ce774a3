import { createServer } from 'node:net';

// freePort lives with the service's own code (the worker uses it); scripts and tests take it from here too.
export { freePort } from '../../platform/ports.ts';

/** Whether nothing listens on `port` of `host` right now (so a server of ours could). */
async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A port a process will bind, and the setting that moves it. */
export interface WantedPort {
  port: number;
  host: string;
  /** What listens there, e.g. `the API`. */
  what: string;
  /** The environment variable that chooses the port. */
  variable: string;
}

/**
 * Every problem with `wanted`, one line each: a port two of them share, and
 * each port something else holds already. All of them at once, so that one
 * look (and one change of settings) is enough.
 */
export async function portProblems(wanted: readonly WantedPort[]): Promise<string[]> {
  const problems: string[] = [];
  const seen = new Map<number, WantedPort>();
  for (const entry of wanted) {
    const first = seen.get(entry.port);
    if (first) {
      problems.push(`${first.variable} and ${entry.variable} both choose port ${entry.port}: set ${entry.variable} to another port`);
      continue;
    }
    seen.set(entry.port, entry);
  }
  const checked = [...seen.values()];
  const free = await Promise.all(checked.map(({ port, host }) => portIsFree(port, host)));
  checked.forEach(({ port, host, what, variable }, index) => {
    if (!free[index])
      problems.push(
        `port ${port} on ${host} (${what}) is in use: stop what holds it (another npm start?), or set ${variable} to another port`,
      );
  });
  return problems;
}
