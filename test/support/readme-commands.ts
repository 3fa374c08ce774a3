// The shell commands of the README, as a reader would copy them: every
// command of its ```sh blocks that is not a comment, a command continued
// over several lines (a trailing backslash, an open quote) being one. A
// trailing comment "# exits N" says the command is expected to exit with N.

export interface ReadmeCommand {
  line: string;
  expectedExit: number;
}

/**
 * The sections whose commands are meant to be pasted, in the README's order
 * (the later ones use the walkthrough's records and its `$t1`):
 * test/integration/walkthrough.test.ts runs them all. The only other ```sh
 * blocks are Setup's (npm ci, npm start, npm test), which that test runs as
 * its own `npm start`.
 */
export const PASTED_SECTIONS = [
  'Walkthrough',
  'The API',
  'Search',
  'Following changes as Activity Streams (LD4 EMM 1.0)',
  'Push stream (Server-Sent Events)',
] as const;

export function readmeSection(readme: string, heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "## ${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The text of every ```sh block of `markdown`, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

export function shellCommands(section: string): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  for (const block of shellBlocks(section)) {
    let pending = '';
    for (const line of block.split('\n')) {
      if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
      pending = pending === '' ? line : `${pending}\n${line}`;
      if (continues(pending)) continue;
      const exit = /#\s*exits (\d+)\b/.exec(line);
      commands.push({ line: pending, expectedExit: exit ? Number(exit[1]) : 0 });
      pending = '';
    }
    if (pending !== '') throw new Error(`a README command does not end: ${pending}`);
  }
  return commands;
}

/** Whether the shell would read another line: the text ends in a backslash, or leaves a quote open. */
function continues(text: string): boolean {
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
    } else if (char === '\\') {
      index += 1;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '#' && (index === 0 || /\s/.test(text[index - 1]!))) {
      // A comment runs to the end of its line.
      const end = text.indexOf('\n', index);
      if (end < 0) return false;
      index = end;
    }
  }
  return quote !== undefined || text.endsWith('\\');
}

/**
 * One bash script running the commands in order in one shell (so variables
 * carry over), each with its output and exit code caught in `outDir`/N.*,
 * going on after a failure so that every command gets its verdict.
 */
export function recordingScript(commands: readonly ReadmeCommand[], outDir: string): string {
  return commands
    .map(({ line }, index) => `{ ${line}\n} > '${outDir}/${index}.out' 2> '${outDir}/${index}.err'\necho $? > '${outDir}/${index}.code'\n`)
    .join('');
}
