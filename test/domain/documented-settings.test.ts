// The settings' defaults the documents state, checked against config.ts: the
// README's configuration table, and the clock-skew window that the README,
// both OpenAPI documents and docs/deployment.md repeat in their text.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
/** The defaults alone: no environment but the one secret that would otherwise be generated in DATA_DIR. */
const defaults = loadConfig({ FORCE_KEY_SECRET: 'documented-settings-test-secret-0123456789' }) as unknown as Record<string, unknown>;

describe('documented defaults', () => {
  it("states in the README's configuration table the default config.ts applies, for every literal default", () => {
    const rows = [...read('README.md').matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| `([^`]*)` \|/gm)];
    expect(rows.length).toBeGreaterThan(20);
    // A default written as a rule (DATA_DIR/exports, a URL made of other settings) is derived, not a value of the schema.
    const literal = rows.filter(([, name]) => defaults[name!] !== undefined);
    expect(Object.fromEntries(literal.map(([, name, written]) => [name, written]))).toEqual(
      Object.fromEntries(literal.map(([, name]) => [name, String(defaults[name!])])),
    );
  });

  it('gives the clock-skew window of signed requests as config.ts does, wherever a document names it with its value', () => {
    const stated = ['README.md', 'openapi/v1.yaml', 'openapi/v2.yaml', 'docs/deployment.md'].flatMap((path) =>
      [...read(path).matchAll(/`API_KEY_CLOCK_SKEW_SECONDS`(?: \(|, )(\d+)/g)].map(([, seconds]) => `${path}: ${seconds}`),
    );
    expect(stated.length).toBeGreaterThanOrEqual(4);
    expect(stated).toEqual(stated.map((line) => line.replace(/\d+$/, String(defaults.API_KEY_CLOCK_SKEW_SECONDS))));
  });
});
