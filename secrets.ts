import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { inspect } from 'node:util';

/**
 * A secret from the environment, else one generated on first use and kept in
 * DATA_DIR, so that an embedded single-machine setup needs no configuration.
 * Processes on several machines must share it through the environment.
 */
export function persistentSecret(value: string | undefined, dataDir: string, name: string): string {
  if (value) return value;
  const dir = resolve(dataDir, 'secrets');
  const file = join(dir, name);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const secret = randomBytes(32).toString('base64url');
    // Written aside and linked into place whole: a process reading at the same moment never sees an empty file.
    const written = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(written, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(written, file);
      return secret;
    } catch {
      // Another process created it first: use theirs.
      return readFileSync(file, 'utf8').trim();
    } finally {
      unlinkSync(written);
    }
  }
}

/**
 * A secret that shows as [redacted] in logs, JSON and util.inspect, so that
 * an object holding it (the parsed configuration) can be printed safely.
 */
export class RedactedSecret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return '[redacted]';
  }
}
