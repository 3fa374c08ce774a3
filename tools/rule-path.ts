// npm run rule-path [-- domain/batch/<file>.ts …] [-- --max 2000]
// npm run rule-path -- --all [--max 2000]
// The files a change to a batch rule must read, with their line counts: the
// rule files named (default: the preferred-name warning), the domain modules
// they import (the record model and what the rule needs), the pipeline that
// says when the rule runs (domain/batch/pipeline.ts) and the code that runs
// its phase (the planner for "commands" and "drained", the apply for "end"),
// the db/ files that take values from the rule (the SQL of the facts it is
// given), and the domain tests of the rule with the test helpers they import.
// A rule's phase is read from the pipeline itself: the phase whose list holds
// a value the rule file exports; any other file the pipeline applies serves
// the commands.
//
// A rule's tests are the domain tests that import its file, or a name the
// batch barrel re-exports from it. The planner's rules are tested by planning
// batches, so for a file the planner applies (one engine/batch/planner.ts
// imports, or one such a file imports, for more than its types) the tests are
// chosen by name: domain/batch/<topic>.ts and domain/batch/<topic>-rules.ts
// keep their planning tests in test/domain/batch-<topic>.test.ts. Its path
// holds that file and the test files named for the batch files that use it (a
// helper such as parts.ts is also tested through the rules it serves). So that
// no test escapes the count, a planner rule with no test file named for it is
// an error, and a planning test named for no batch file is on the path of
// every rule the planner applies.
//
// --all checks every file of domain/batch/ but the barrel (index.ts, no rule)
// and prints its total. Exits 1 when a total passes --max or a planner rule
// has no test file named for it. The pipeline's own path is the list, the
// types of its phases, both runners and its tests, not every rule it lists.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
/** An import or re-export statement; group 1 marks one of types only. */
const STATEMENT = /^(?:import|export)\s+(type\s)?[^;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
const BATCH = 'domain/batch/';
const BARREL = 'domain/batch/index.ts';
const PLANNER = 'engine/batch/planner.ts';
const PLANNING = 'test/support/batch-planning.ts';
const PIPELINE = 'domain/batch/pipeline.ts';
const TYPES = 'domain/batch/types.ts';
const APPLY = 'services/batches/apply.ts';
/** Where each phase of the pipeline runs. */
const RUNNERS = { commands: [PLANNER], drained: [PLANNER], end: [APPLY] } as const;
type Phase = keyof typeof RUNNERS;

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const resolve = (file: string, path: string) => normalize(join(dirname(file), path));

function relativeImports(file: string): string[] {
  return [...read(file).matchAll(IMPORT)].map((match) => resolve(file, match[1]!)).filter((path) => existsSync(join(ROOT, path)));
}

/** The batch files this one imports for more than types. */
function batchValueImports(file: string): string[] {
  return [...read(file).matchAll(STATEMENT)]
    .filter((match) => match[1] === undefined)
    .map((match) => resolve(file, match[2]!))
    .filter((path) => path.startsWith(BATCH) && existsSync(join(ROOT, path)));
}

/** `start` and everything it imports, following only imports inside `folder`. */
function closure(start: readonly string[], folder: string, imports = relativeImports): Set<string> {
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of imports(file)) if (imported.startsWith(folder) && !seen.has(imported)) queue.push(imported);
  }
  return seen;
}

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}
const testFiles = (dir: string) => filesUnder(dir, '.test.ts');

const lineCount = (file: string) => read(file).split('\n').length - 1;

const batchFiles = readdirSync(join(ROOT, BATCH))
  .filter((name) => name.endsWith('.ts'))
  .map((name) => BATCH + name)
  .sort();
/** The batch files the pipeline applies (the planner reaches them through it). */
const applied = closure(batchValueImports(PLANNER), BATCH, batchValueImports);

interface Pipeline {
  commands: Record<string, unknown>;
  drained: readonly unknown[];
  end: unknown;
}
const { BATCH_PIPELINE: pipeline } = (await import(join(ROOT, PIPELINE))) as { BATCH_PIPELINE: Pipeline };

/** The phase a batch file's rule runs in: the pipeline's list that holds a value it exports; commands for any other file it applies. */
async function phaseOf(file: string): Promise<Phase | undefined> {
  if (!applied.has(file) || file === PIPELINE) return undefined;
  const exported = Object.values((await import(join(ROOT, file))) as Record<string, unknown>);
  if (exported.includes(pipeline.end)) return 'end';
  if (pipeline.drained.some((rule) => exported.includes(rule))) return 'drained';
  return 'commands';
}

/** The names a file imports for their values from `from` (not `import type`, not `type X`). */
function valueNamesImported(file: string, from: string): string[] {
  return [...read(file).matchAll(/^import\s+(?!type\s)\{([^}]*)\}\s*from\s*['"](\.{1,2}\/[^'"]+)['"]/gm)]
    .filter((match) => resolve(file, match[2]!) === from)
    .flatMap((match) => match[1]!.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '' && !name.startsWith('type '));
}

const dbFiles = filesUnder('db', '.ts');
/** The db/ files that take values from these rule files (directly, or by a name the barrel re-exports from them): the SQL of their facts. */
function factFiles(rules: readonly string[]): string[] {
  const names = barrelNames(rules);
  return dbFiles.filter(
    (file) =>
      rules.some((rule) => valueNamesImported(file, rule).length > 0) ||
      valueNamesImported(file, BARREL).some((name) => names.includes(name)),
  );
}
/** The planning tests named for a batch file: domain/batch/<topic>(-rules).ts → test/domain/batch-<topic>.test.ts. */
const topicTest = (file: string) => `test/domain/batch-${basename(file, '.ts').replace(/-rules$/, '')}.test.ts`;
const domainTests = testFiles('test/domain');
/** The tests that plan batches: through the helper, or through the fixture that plans one update. */
const planningTests = domainTests.filter((test) => relativeImports(test).includes(PLANNING) || /\bplanUpdate\(/.test(read(test)));
const unnamedPlanningTests = planningTests.filter((test) => !batchFiles.some((file) => topicTest(file) === test));

/** The names the batch barrel re-exports from these rule files. */
function barrelNames(rules: readonly string[]): string[] {
  return read(BARREL)
    .split('\n')
    .filter((line) => rules.some((rule) => line.includes(`'./${rule.slice(BATCH.length)}'`)))
    .flatMap(
      (line) =>
        /\{([^}]*)\}/
          .exec(line)?.[1]!
          .split(',')
          .map((name) => name.replace(/^\s*type\s+/, '').trim()) ?? [],
    )
    .filter(Boolean);
}

interface RulePath {
  sections: [string, string[]][];
  total: number;
  problems: string[];
}

async function rulePath(rules: readonly string[]): Promise<RulePath> {
  // The pipeline's path is the list and its phases' types: each rule it lists has a path of its own.
  const domain = rules.includes(PIPELINE)
    ? closure([PIPELINE, TYPES], 'domain/', (file) => (file === PIPELINE ? [TYPES] : relativeImports(file)))
    : closure(rules, 'domain/');
  const phases = new Set((await Promise.all(rules.map(phaseOf))).filter((phase) => phase !== undefined));
  const runners = rules.includes(PIPELINE) ? [PLANNER, APPLY] : [...new Set([...phases].flatMap((phase) => RUNNERS[phase]))].sort();
  const when = phases.size > 0 && !rules.includes(PIPELINE) ? [PIPELINE] : [];
  const names = barrelNames(rules);
  const plannerRules = rules.filter((rule) => applied.has(rule));
  const problems = plannerRules
    .filter((rule) => !existsSync(join(ROOT, topicTest(rule))))
    .map((rule) => `${rule}: the planner applies it, but it has no tests in ${topicTest(rule)}`);
  // The pipeline lists every rule: its tests are of the phases, not of each rule.
  const users = batchFiles.filter(
    (file) => file !== PIPELINE && plannerRules.some((rule) => closure([file], BATCH, batchValueImports).has(rule)),
  );
  const named = new Set([...plannerRules, ...users].map(topicTest));
  const testsRule = (test: string): boolean => {
    const imports = relativeImports(test);
    if (imports.some((imported) => rules.includes(imported))) return true;
    if (imports.includes(BARREL) && names.some((name) => new RegExp(`\\b${name}\\b`).test(read(test)))) return true;
    return plannerRules.length > 0 && (named.has(test) || unnamedPlanningTests.includes(test));
  };
  const tests = domainTests.filter(testsRule).sort();
  const helpers = [...closure(tests, 'test/')].filter((file) => !tests.includes(file)).sort();
  const sections: [string, string[]][] = [
    ['the rule', [...rules]],
    ['what it imports (the model and the rules it needs)', [...domain].filter((file) => !rules.includes(file)).sort()],
    [`when it runs (${[...phases].join(', ') || 'the pipeline'}) and what runs it`, [...when, ...runners]],
    ['the SQL of the facts it is given', factFiles(rules)],
    ["the rule's tests", tests],
    ['the test helpers they import', helpers],
  ];
  const total = sections.flatMap(([, files]) => files).reduce((sum, file) => sum + lineCount(file), 0);
  return { sections, total, problems };
}

const args = process.argv.slice(2);
const maxAt = args.indexOf('--max');
const max = maxAt === -1 ? 2000 : Number(args[maxAt + 1]);
const all = args.includes('--all');
const rules = args
  .filter((arg, index) => arg !== '--all' && (maxAt === -1 || (index !== maxAt && index !== maxAt + 1)))
  .map((arg) => normalize(arg));
if (rules.length === 0 && !all) rules.push('domain/batch/preferred-names.ts');
for (const rule of rules) if (!existsSync(join(ROOT, rule))) throw new Error(`no such file: ${rule}`);

if (all) {
  for (const file of batchFiles.filter((candidate) => candidate !== BARREL)) {
    const { total, problems } = await rulePath([file]);
    process.stdout.write(`  ${String(total).padStart(5)}  ${file}\n`);
    if (total > max) problems.push(`${file}: its path is ${total} lines, more than ${max}`);
    for (const problem of problems) process.stderr.write(`rule-path: ${problem}\n`);
    if (problems.length > 0) process.exitCode = 1;
  }
} else {
  const { sections, total, problems } = await rulePath(rules);
  for (const [title, files] of sections) {
    process.stdout.write(`${title}:\n`);
    for (const file of files) process.stdout.write(`  ${String(lineCount(file)).padStart(5)}  ${file}\n`);
  }
  process.stdout.write(`total: ${total} lines (at most ${max})\n`);
  for (const problem of problems) process.stderr.write(`rule-path: ${problem}\n`);
  if (total > max || problems.length > 0) process.exitCode = 1;
}
