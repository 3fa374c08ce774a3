// npm run settings:reference writes docs/settings.md and README's table of the
// settings every deployment sets, both from config.ts: each setting's comment
// there is its documentation, its schema gives the default, and
// DEPLOYMENT_SETTINGS names the first tier. `--check` (run by npm run lint)
// fails when either file differs from what config.ts says, or a setting has
// no comment, so the reference cannot drift from the code.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEPLOYMENT_SETTINGS, SETTING_GROUPS } from '../config.ts';

const ROOT = new URL('../', import.meta.url);
const README_START = '<!-- deployment settings: generated from config.ts by npm run settings:reference -->';
const README_END = '<!-- end of deployment settings -->';

interface Setting {
  name: string;
  group: string;
  meaning: string;
  tuning: boolean;
  defaultValue: string;
}

/** The comment lines of a block at two spaces' indent, without their markers. */
function commentText(lines: readonly string[]): string {
  return lines
    .map((line) =>
      line
        .trim()
        .replace(/^\/\*\*\s?|^\*\/|\s*\*\/$|^\*\s?|^\/\/\s?/g, '')
        .trim(),
    )
    .filter(Boolean)
    .join(' ');
}

/** Each setting of config.ts's groups in source order, with its comment and group. */
export function readSettings(source: string): { groups: { name: string; title: string }[]; settings: Setting[]; undocumented: string[] } {
  const lines = source.split('\n');
  const groups: { name: string; title: string }[] = [];
  const settings: Setting[] = [];
  const undocumented: string[] = [];
  let group: string | undefined;
  let pending: string[] = [];
  let inBlock = false;
  for (const [index, line] of lines.entries()) {
    const opening = /^const (\w+) = \{$/.exec(line);
    if (opening && opening[1]! in SETTING_GROUPS) {
      group = opening[1]!;
      groups.push({ name: group, title: commentText([lines[index - 1] ?? '']) });
      pending = [];
      continue;
    }
    if (group === undefined) continue;
    if (line === '};') {
      group = undefined;
      continue;
    }
    if (inBlock) {
      pending.push(line);
      if (line.includes('*/')) inBlock = false;
      continue;
    }
    if (/^ {2}\/\*\*/.test(line)) {
      pending = [line];
      inBlock = !line.includes('*/');
      continue;
    }
    if (/^ {2}\/\//.test(line)) {
      pending.push(line);
      continue;
    }
    const key = /^ {2}([A-Z][A-Z0-9_]*): (.*)$/.exec(line);
    if (!key) continue;
    const name = key[1]!;
    let meaning = commentText(pending);
    pending = [];
    const tuning = /^Tuning knob:\s*/.test(meaning);
    meaning = meaning.replace(/^Tuning knob:\s*/, '');
    if (meaning === '') undocumented.push(name);
    settings.push({ name, group, meaning, tuning, defaultValue: defaultOf(group, name, key[2]!) });
  }
  return { groups, settings, undocumented };
}

/** The default as the schema gives it when the variable is unset. */
function defaultOf(group: string, name: string, firstLine: string): string {
  const schema = (SETTING_GROUPS as Record<string, Record<string, { safeParse(value: unknown): { success: boolean; data?: unknown } }>>)[
    group
  ]![name]!;
  if (firstLine.includes('default(() =>')) return 'computed at start';
  const parsed = schema.safeParse(undefined);
  if (!parsed.success) return 'required';
  const value = parsed.data;
  const choices = optionsOf(schema);
  if (choices)
    return `${value === undefined ? 'unset' : `\`${String(value)}\``} (one of ${choices.map((choice) => `\`${choice}\``).join(', ')})`;
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
}

/** The values of an enum setting (a z.enum, perhaps with a default or optional around it). */
function optionsOf(schema: unknown): readonly string[] | undefined {
  let inner = schema as { options?: readonly string[]; unwrap?: () => unknown } | undefined;
  for (let depth = 0; inner && depth < 3; depth += 1) {
    if (Array.isArray(inner.options)) return inner.options;
    inner = inner.unwrap?.() as typeof inner;
  }
  return undefined;
}

const cell = (text: string) => text.replaceAll('|', '\\|');

function row(setting: Setting): string {
  const kind = DEPLOYMENT_SETTINGS.includes(setting.name) ? 'deployment' : setting.tuning ? 'tuning knob' : 'behaviour';
  return `| \`${setting.name}\` | ${setting.defaultValue} | ${kind} | ${cell(setting.meaning)} |`;
}

/** docs/settings.md, whole. */
export function settingsDocument(source: string): string {
  const { groups, settings } = readSettings(source);
  const out = [
    '# Settings',
    '',
    '<!-- Generated from config.ts by npm run settings:reference; npm run lint fails when it differs. Edit the comments in config.ts. -->',
    '',
    'Every setting the service reads, from the environment, parsed once at start',
    '(`config.ts`): a bad value stops the process with one line naming it. Each',
    'is one of three kinds:',
    '',
    '- **deployment**: every deployment sets these (addresses, credentials, the',
    '  public URL, retention); README lists them;',
    '- **behaviour**: what the service does or allows, with defaults that hold',
    '  from a laptop to a national registry;',
    '- **tuning knob**: trades throughput against memory or load; the default is',
    '  measured (docs/performance.md).',
    '',
  ];
  for (const group of groups) {
    out.push(`## ${group.title.replace(/\.$/, '')}`, '', '| variable | default | kind | meaning |', '|---|---|---|---|');
    for (const setting of settings.filter((entry) => entry.group === group.name)) out.push(row(setting));
    out.push('');
  }
  return out.join('\n');
}

/** README's table of the deployment settings, between its markers. */
export function deploymentTable(source: string): string {
  const { settings } = readSettings(source);
  const chosen = DEPLOYMENT_SETTINGS.map((name) => settings.find((setting) => setting.name === name)!);
  return [
    README_START,
    '| variable | default | meaning |',
    '|---|---|---|',
    ...chosen.map((setting) => `| \`${setting.name}\` | ${setting.defaultValue} | ${cell(setting.meaning)} |`),
    README_END,
  ].join('\n');
}

function withDeploymentTable(readme: string, table: string): string {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${README_START} … ${README_END} section`);
  return readme.slice(0, start) + table + readme.slice(end + README_END.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = readFileSync(new URL('config.ts', ROOT), 'utf8');
  const { undocumented, settings } = readSettings(source);
  const unknown = DEPLOYMENT_SETTINGS.filter((name) => !settings.some((setting) => setting.name === name));
  const problems = [
    ...undocumented.map((name) => `config.ts: ${name} has no comment saying what it does`),
    ...unknown.map((name) => `config.ts: DEPLOYMENT_SETTINGS names ${name}, which is no setting`),
  ];
  const files = [
    { path: 'docs/settings.md', want: settingsDocument(source) },
    { path: 'README.md', want: withDeploymentTable(readFileSync(new URL('README.md', ROOT), 'utf8'), deploymentTable(source)) },
  ];
  for (const file of files) {
    const have = readFileSync(new URL(file.path, ROOT), 'utf8');
    if (have === file.want) continue;
    if (process.argv.includes('--check')) problems.push(`${file.path} differs from config.ts: run npm run settings:reference`);
    else writeFileSync(new URL(file.path, ROOT), file.want);
  }
  for (const problem of problems) console.error(`settings-reference: ${problem}`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
