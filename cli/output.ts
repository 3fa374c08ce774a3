import { once } from 'node:events';

// Results go to stdout, everything meant for the person at the terminal to stderr.

export async function writeOut(text: string | Uint8Array): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/** Writes a text result, ending it with a newline when it has none. */
export async function printResult(text: string): Promise<void> {
  await writeOut(text.endsWith('\n') ? text : `${text}\n`);
}

export async function printJson(value: unknown): Promise<void> {
  await writeOut(`${JSON.stringify(value, null, 2)}\n`);
}

/** Copies a text response body to stdout as it arrives, ending it with a newline when it has none (so the prompt starts on a line of its own). */
export async function copyToStdout(response: Response): Promise<void> {
  if (response.body === null) return;
  let last: number | undefined;
  for await (const chunk of response.body) {
    if (chunk.length === 0) continue;
    last = chunk[chunk.length - 1];
    await writeOut(chunk);
  }
  if (last !== undefined && last !== 0x0a) await writeOut('\n');
}

export function say(message: string): void {
  process.stderr.write(`${message}\n`);
}
