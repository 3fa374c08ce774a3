import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 1000;

/** Reads until `done` holds, quickly at first and then once a second; `seen` gets every value read. */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, seen: (value: T) => void = () => undefined): Promise<T> {
  let delay = FIRST_DELAY_MS;
  for (;;) {
    const value = await read();
    seen(value);
    if (done(value)) return value;
    await sleep(delay);
    delay = Math.min(MAX_DELAY_MS, Math.round(delay * 1.5));
  }
}
