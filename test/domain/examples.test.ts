// examples/: every batch is valid against the project's schema (the check
// POST /batches runs) and, being written in the real registry's public
// shape, against the public XSD of its version too. What each one does on
// a running service is proven by test/integration/walkthrough.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkBatchXml } from '../../engine/validation/index.ts';
import { PUBLIC_SCHEMAS_PRESENT, publicSchemaErrors } from '../support/public-schemas.ts';

const EXAMPLES = new URL('../../examples/', import.meta.url);
const VERSIONS = ['v2', 'v1'] as const;

function examples(version: (typeof VERSIONS)[number]): string[] {
  return readdirSync(new URL(`${version}/`, EXAMPLES))
    .filter((name) => name.endsWith('.xml'))
    .sort();
}

function read(version: string, name: string): Buffer {
  return readFileSync(new URL(`${version}/${name}`, EXAMPLES));
}

describe('examples/', () => {
  it('holds a numbered series for each interface: create, update, state change, warnings only, invalid', () => {
    for (const version of VERSIONS) {
      expect(examples(version), fileURLToPath(new URL(version, EXAMPLES))).toEqual([
        '01-create.xml',
        '02-update.xml',
        '03-approve.xml',
        '04-namesake.xml',
        '05-invalid.xml',
      ]);
    }
  });

  for (const version of VERSIONS) {
    for (const name of examples(version)) {
      it(`${version}/${name} is a valid ${version} batch for this service`, async () => {
        const report = await checkBatchXml(read(version, name));
        expect(report).toMatchObject({ valid: true, version });
      });

      it.skipIf(!PUBLIC_SCHEMAS_PRESENT)(`${version}/${name} is valid against the public XSD of ${version}`, async () => {
        expect(await publicSchemaErrors(read(version, name), version)).toEqual([]);
      });
    }
  }

  it('writes v2 in the public names (parts, not the spec spelling parst), one change per updateEntity', () => {
    for (const name of examples('v2')) {
      const xml = read('v2', name).toString('utf8');
      expect(xml, name).toContain('xmlns="http://cam.tacr.cz/2025"');
      expect(xml, name).not.toMatch(/<parst[\s>]/);
      for (const update of xml.match(/<updateEntity>[\s\S]*?<\/updateEntity>/g) ?? []) {
        const changes = update.match(/^ {4}<(?!entity[\s>]|entityRef>|\/)/gm) ?? [];
        expect(changes.length, `${name}: ${update}`).toBe(1);
      }
    }
  });
});
