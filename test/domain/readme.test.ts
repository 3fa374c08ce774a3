// What the README states about the code, checked against the code: the
// tests that need the real registry's documents, the CLI's exit codes, and
// which query parameters of v2 are required. (Its commands are run by
// test/integration/walkthrough.test.ts.)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { EXIT_MEANINGS } from '../../cli/errors.ts';
import { PASTED_SECTIONS, readmeSection, shellBlocks, shellCommands } from '../support/readme-commands.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('README', () => {
  it('holds shell commands only where the walkthrough test pastes them, and in Setup (npm ci, npm start, npm test)', () => {
    const sections = README.split(/\n(?=## )/).map((text) => ({ heading: /^## (.+)/m.exec(text)?.[1], text }));
    const withCommands = sections.filter(({ text }) => shellBlocks(text).length > 0).map(({ heading }) => heading);
    expect(withCommands).toEqual(['Setup', ...PASTED_SECTIONS]);
    // A command over several lines is one command.
    const search = shellCommands(readmeSection(README, 'Search'));
    expect(search).toHaveLength(1);
    expect(search[0]!.line).toMatch(/^curl [\s\S]*"value":"capek"\}\}\}'$/);
  });

  it("names every test file that skips without the real registry's documents", () => {
    const needing = testFiles(join(ROOT, 'test'))
      .filter((file) => /from '\.\.\/support\/(public-schemas|real-client)\.ts'/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(needing.length).toBeGreaterThanOrEqual(4);
    const section = readmeSection(README, 'Tests and benchmarks');
    for (const file of needing) expect(section, file).toContain(`\`${file}\``);
  });

  it("gives the CLI's exit codes as --help does", () => {
    const rows = [...readmeSection(README, 'CLI').matchAll(/^\| (\d+) \| (.+) \|$/gm)].map(([, code, meaning]) => [code, meaning]);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(EXIT_MEANINGS)));
  });

  it('marks each v2 query parameter as openapi/v2.yaml does: required ones bare, optional ones in brackets', () => {
    type Parameter = { name?: string; in?: string; required?: boolean; $ref?: string };
    const document = parse(readFileSync(join(ROOT, 'openapi', 'v2.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, { parameters?: Parameter[] } | Parameter[]>>;
      components: { parameters: Record<string, Parameter> };
    };
    const resolve = (parameter: Parameter) =>
      parameter.$ref ? document.components.parameters[parameter.$ref.split('/').at(-1)!]! : parameter;
    const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
    const documented = new Map<string, { required: string[]; optional: string[] }>();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (Array.isArray(operation) || method === 'parameters') continue;
        const query = (operation.parameters ?? []).map(resolve).filter((parameter) => parameter.in === 'query');
        if (query.length === 0) continue;
        documented.set(`${method.toUpperCase()} ${shape(path)}`, {
          required: query
            .filter((parameter) => parameter.required)
            .map((parameter) => parameter.name!)
            .sort(),
          optional: query
            .filter((parameter) => !parameter.required)
            .map((parameter) => parameter.name!)
            .sort(),
        });
      }
    }

    const table = readmeSection(README, 'The API')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const written = new Map<string, { required: string[]; optional: string[] }>();
    for (const line of table) {
      const cell = line.split(' | ')[0]!;
      for (const [, method, target] of cell.matchAll(/`(GET|POST|PUT|DELETE) ([^`]+)`/g)) {
        const start = target!.search(/[?[]/);
        if (start < 0) continue;
        const names = (text: string) =>
          text
            .split(/[?&]/)
            .map((part) => part.split('=')[0]!)
            .filter(Boolean)
            .sort();
        const query = target!.slice(start);
        const all = names(query.replace(/[[\]]/g, ''));
        const required = names(query.replace(/\[[^\]]*\]/g, ''));
        written.set(`${method} ${shape(target!.slice(0, start))}`, { required, optional: all.filter((name) => !required.includes(name)) });
      }
    }
    expect(Object.fromEntries(written)).toEqual(Object.fromEntries(documented));
  });
});
