import { signRequest } from '../api/auth/nda-hmac.ts';
import type { ProblemCode } from '../api/problems.ts';
import { CliError, EXIT } from './errors.ts';

export interface ClientOptions {
  url: string;
  /** Where the URL came from, for the hint when nothing answers there. */
  urlFrom?: 'default' | 'env' | 'cli';
  token?: string;
  /** Signs every request as the registry's client does, instead of sending a token. */
  key?: { keyId: string; secret: string };
}

interface RequestOptions extends RequestInit {
  /**
   * Problem codes that mean the command's subject failed (exit 1), not the
   * request (exit 4) or the server (exit 3): a batch refused as invalid, an
   * expired export.
   */
  failures?: readonly ProblemCode[];
}

export interface ApiClient {
  baseUrl: string;
  /** Sends a request; a 2xx answer is returned, anything else becomes a CliError carrying the problem's detail. */
  request(path: string, options?: RequestOptions): Promise<Response>;
  json<T>(path: string, options?: RequestOptions): Promise<T>;
  text(path: string, options?: RequestOptions): Promise<string>;
}

export function apiClient(options: ClientOptions): ApiClient {
  const baseUrl = options.url.replace(/\/+$/, '');
  async function request(path: string, { failures = [], ...init }: RequestOptions = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    // Signed as fetch will send it: the URL normalised the way fetch normalises it.
    const url = new URL(`${baseUrl}${path}`);
    if (options.key) {
      for (const [name, value] of Object.entries(signRequest({ url, method: init.method ?? 'GET', ...options.key })))
        headers.set(name, value);
    } else if (options.token) {
      headers.set('authorization', `Bearer ${options.token}`);
    }
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers });
    } catch (error) {
      throw new CliError(EXIT.server, `cannot reach ${baseUrl}: ${networkReason(error)}\n${unreachableHint(options.urlFrom)}`);
    }
    if (response.ok) return response;
    throw await problemError(init.method ?? 'GET', path, response, failures, Boolean(options.key || options.token));
  }
  return {
    baseUrl,
    request,
    async json<T>(path: string, init?: RequestOptions) {
      return (await (await request(path, init)).json()) as T;
    },
    async text(path: string, init?: RequestOptions) {
      return (await request(path, init)).text();
    },
  };
}

interface Problem {
  code?: string;
  detail?: string;
  properties?: { reason?: string };
  errors?: Array<{ message: string; line?: number; column?: number; path?: string }>;
}

/** How the CLI is given credentials, which the server's advice (an HTTP header) cannot name. */
const NO_CREDENTIALS_HINT =
  'no token was given to the CLI: set ENTITY_RECORDS_TOKEN (export ENTITY_RECORDS_TOKEN=<token>) or pass --token <token>, or sign with an API key (--key-id and --key-secret)';

/**
 * The answer's problem+json as one message: status, code, detail and each
 * listed error on its own line; a request sent without credentials adds how
 * the CLI is given them (the server's advice names the HTTP header).
 */
async function problemError(
  method: string,
  path: string,
  response: Response,
  failures: readonly string[],
  sentCredentials: boolean,
): Promise<CliError> {
  const text = await response.text().catch(() => '');
  let problem: Problem;
  try {
    problem = JSON.parse(text) as Problem;
  } catch {
    problem = { detail: text.trim().slice(0, 500) || response.statusText };
  }
  const lines = [
    `${method} ${path}: ${response.status}${problem.code ? ` ${problem.code}` : ''}${problem.detail ? `: ${problem.detail}` : ''}`,
  ];
  for (const error of problem.errors ?? []) {
    const where =
      error.line !== undefined ? `line ${error.line}${error.column !== undefined ? `, column ${error.column}` : ''}` : error.path;
    lines.push(`  ${where ? `${where}: ` : ''}${error.message}`);
  }
  if (!sentCredentials && problem.properties?.reason === 'NoCredentials') lines.push(NO_CREDENTIALS_HINT);
  if (response.status >= 500 || response.status < 400) return new CliError(EXIT.server, lines.join('\n'));
  const failed = problem.code !== undefined && failures.includes(problem.code);
  return new CliError(failed ? EXIT.failed : EXIT.refused, lines.join('\n'));
}

/**
 * What to check when nothing answers: a service started on another port (or
 * machine) is reached through --url or ENTITY_RECORDS_URL; the CLI does not
 * read PORT, the server's own setting (docs/decisions/0180-cli-address-not-port.md).
 */
export function unreachableHint(urlFrom: ClientOptions['urlFrom']): string {
  switch (urlFrom) {
    case 'cli':
      return 'is the service running at the address --url gives? `npm start` prints its address';
    case 'env':
      return 'is the service running at the address ENTITY_RECORDS_URL gives? `npm start` prints its address; --url overrides it';
    default:
      return 'that is the default address: is the service running? Started on another port (PORT) or machine, give its address with --url or ENTITY_RECORDS_URL (export ENTITY_RECORDS_URL=http://127.0.0.1:PORT)';
  }
}

/** fetch hides the socket error in `cause` (ECONNREFUSED, ENOTFOUND, ...). */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
