// Debian's headless Chromium for the browser tests (installed by
// scripts/ensure-chromium.sh when missing), started so that it may reach
// nothing but the tests' own servers.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // No name resolves: only the literal loopback address of the test servers is reachable.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];
/** apt-get update + install of chromium on a fresh CI machine. */
export const CHROMIUM_INSTALL_TIMEOUT_MS = 15 * 60_000;

/** Why Chromium cannot be used here, or undefined once it is installed. */
export async function ensureChromium(): Promise<string | undefined> {
  try {
    await promisify(execFile)('bash', [join(import.meta.dirname, '../../scripts/ensure-chromium.sh')], {
      timeout: CHROMIUM_INSTALL_TIMEOUT_MS,
    });
    return undefined;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    return `${CHROMIUM} is missing and scripts/ensure-chromium.sh could not install it: ${(stderr || message).trim()}`;
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
