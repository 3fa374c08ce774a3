// A setting's default the documents repeat in their prose, checked against
// config.ts: the clock-skew window that the README, both OpenAPI documents and
// docs/deployment.md state. (The settings tables are generated from config.ts,
// tools/settings-reference.ts, and checked by lint.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
/** The defaults alone: no environment but the one secret that would otherwise be generated in DATA_DIR. */
const defaults = loadConfig({ FORCE_KEY_SECRET: 'documented-settings-test-secret-0123456789' }) as unknown as Record<string, unknown>;

describe('documented defaults', () => {
  it('gives the clock-skew window of signed requests as config.ts does, wherever a document names it with its value', () => {
    const stated = ['README.md', 'openapi/v1.yaml', 'openapi/v2.yaml', 'docs/deployment.md'].flatMap((path) =>
      [...read(path).matchAll(/`API_KEY_CLOCK_SKEW_SECONDS`(?: \(|, )(\d+)/g)].map(([, seconds]) => `${path}: ${seconds}`),
    );
    expect(stated.length).toBeGreaterThanOrEqual(4);
    expect(stated).toEqual(stated.map((line) => line.replace(/\d+$/, String(defaults.API_KEY_CLOCK_SKEW_SECONDS))));
  });
});
