/** The CLI's exit codes; `--help` prints them. */
export const EXIT = {
  ok: 0,
  /** The batch failed, or the export did not produce a verified file. */
  failed: 1,
  /** Bad arguments or options, or a local file that cannot be read or written. */
  usage: 2,
  /** A 5xx, an unreachable server, or a 4xx the command did not expect. */
  server: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure that ends the command with `exitCode` after printing its message to stderr. */
export class CliError extends Error {
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}
