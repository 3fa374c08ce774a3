// The shell commands of one README section, as a reader would copy them:
// every line of its ```sh blocks that is not blank or a comment. A trailing
// comment "# exits N" says the command is expected to exit with N.

export interface ReadmeCommand {
  line: string;
  expectedExit: number;
}

export function readmeSection(readme: string, heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "## ${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

export function shellCommands(section: string): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  for (const [, block] of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const line of block!.split('\n')) {
      if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
      const exit = /#\s*exits (\d+)\b/.exec(line);
      commands.push({ line, expectedExit: exit ? Number(exit[1]) : 0 });
    }
  }
  return commands;
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
