/** The CLI's exit codes; `--help` prints them with EXIT_MEANINGS, and the README's table says the same. */
export const EXIT = {
  ok: 0,
  /** The batch failed, or the export did not produce a verified file. */
  failed: 1,
  /** Bad arguments or options, or a local file that cannot be read or written. */
  usage: 2,
  /** A 5xx, an unreachable server, or an answer the CLI cannot read. */
  server: 3,
  /** A 4xx the command did not expect: the server refused the request itself (credentials, permission, a missing resource). */
  refused: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_MEANINGS: Readonly<Record<ExitCode, string>> = {
  0: 'success',
  1: 'the batch failed (or was refused as invalid or as a duplicate), the export failed or its file did not verify',
  2: 'usage error: bad arguments or options, an input file that cannot be read',
  3: 'server error: a 5xx answer, or the server cannot be reached',
  4: 'client error: the server refused the request (4xx), e.g. 401 no token or a wrong one, 403 a missing permission, 404 no such record, batch or export (the problem detail is printed)',
};

/** A failure that ends the command with `exitCode` after printing its message to stderr. */
export class CliError extends Error {
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}
