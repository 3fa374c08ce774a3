// npm run rule-path [-- domain/batch/rules.ts …] [-- --max 2000]
// The files a change to a batch rule must read, with their line counts: the
// rule files named (default: the preferred-name warning), the domain modules
// they import (the record model and what the rule needs), and the domain
// tests of the rule with the test helpers they import. The engine that runs
// the rules at scale is not on the path: tests plan through one helper.
// Exits 1 when the total passes --max.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function relativeImports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)]
    .map((match) => normalize(join(dirname(file), match[1]!)))
    .filter((path) => existsSync(join(ROOT, path)));
}

/** `start` and everything it imports, following only imports inside `folder`. */
function closure(start: readonly string[], folder: string): Set<string> {
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of relativeImports(file)) if (imported.startsWith(folder) && !seen.has(imported)) queue.push(imported);
  }
  return seen;
}

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const lineCount = (file: string) => readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1;

const args = process.argv.slice(2);
const maxAt = args.indexOf('--max');
const max = maxAt === -1 ? 2000 : Number(args[maxAt + 1]);
const rules = args.filter((arg, index) => maxAt === -1 || (index !== maxAt && index !== maxAt + 1)).map((arg) => normalize(arg));
if (rules.length === 0) rules.push('domain/batch/preferred-names.ts');
for (const rule of rules) if (!existsSync(join(ROOT, rule))) throw new Error(`no such file: ${rule}`);

const domain = closure(rules, 'domain/');
const BARREL = 'domain/batch/index.ts';
const PLANNING = 'test/support/batch-planning.ts';
/** The names the batch barrel re-exports from these rule files. */
const barrelNames = readFileSync(join(ROOT, BARREL), 'utf8')
  .split('\n')
  .filter((line) => rules.some((rule) => line.includes(`'./${rule.slice('domain/batch/'.length)}'`)))
  .flatMap(
    (line) =>
      /\{([^}]*)\}/
        .exec(line)?.[1]!
        .split(',')
        .map((name) => name.replace(/^\s*type\s+/, '').trim()) ?? [],
  )
  .filter(Boolean);
/** The rules the planner applies: their tests are the tests that plan batches. */
const plannerRules = relativeImports('engine/batch/planner.ts');
/**
 * A test of the rule imports it, or a name the batch barrel re-exports from
 * it, or plans batches (the helper over the planner) when the planner
 * applies the rule.
 */
function testsRule(test: string): boolean {
  const imports = relativeImports(test);
  const text = readFileSync(join(ROOT, test), 'utf8');
  if (imports.some((imported) => rules.includes(imported))) return true;
  if (imports.includes(BARREL) && barrelNames.some((name) => new RegExp(`\\b${name}\\b`).test(text))) return true;
  return imports.includes(PLANNING) && rules.some((rule) => plannerRules.includes(rule));
}
const tests = testFiles('test/domain').filter(testsRule);
const helpers = [...closure(tests, 'test/')].filter((file) => !tests.includes(file));

const sections: [string, string[]][] = [
  ['the rule', rules],
  ['what it imports (the model and the rules it needs)', [...domain].filter((file) => !rules.includes(file)).sort()],
  ["the rule's tests", tests.sort()],
  ['the test helpers they import', helpers.sort()],
];
let total = 0;
for (const [title, files] of sections) {
  process.stdout.write(`${title}:\n`);
  for (const file of files) {
    const lines = lineCount(file);
    total += lines;
    process.stdout.write(`  ${String(lines).padStart(5)}  ${file}\n`);
  }
}
process.stdout.write(`total: ${total} lines (at most ${max})\n`);
if (total > max) process.exitCode = 1;
