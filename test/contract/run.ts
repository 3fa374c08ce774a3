// npm run test:contract
//
// The OpenAPI documents checked against the running service as their users'
// tools check them: schemathesis (pinned, from PyPI, in .venv/) with every
// check, on both documents, against a whole stack (Temporal dev server,
// scratch database, worker and API as child processes). Exit 1 on any
// failure; the last line is `contract: N passed, M failed` (one per document).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BENCH_TOKEN, dropDatabase, startStack } from '../../bench/lib/stack.ts';
import { ensureVenvTool } from '../../scripts/lib/venv.ts';
import { plainRule } from './plain-rules.ts';
import { type ContractData, seedContractData } from './seed.ts';

const SCHEMATHESIS_VERSION = '4.32.5';
/** hooks.py (valid batch bodies for the XML media types) and schemathesis.toml. */
const HOOKS_DIR = fileURLToPath(new URL('.', import.meta.url));
/** Examples per operation: enough to cover every parameter's bounds, few enough to stay within minutes. */
const MAX_EXAMPLES = process.env.CONTRACT_MAX_EXAMPLES ?? '25';

const schemathesis = ensureVenvTool('schemathesis', SCHEMATHESIS_VERSION, 'schemathesis');
// The submission limit would answer 429 to a fuzzer that submits hundreds of batches; it has its own test.
const stack = await startStack(`er_contract_${process.pid}`, { SUBMISSION_RATE_LIMIT: '0' }, { childOutput: 'file' });

/** Copies schemathesis's output, its pytest-style rules as plain headings (plain-rules.ts says why). */
function copyOutput(from: Readable, to: Writable): Promise<void> {
  const lines = createInterface({ input: from, crlfDelay: Infinity });
  lines.on('line', (line) => to.write(`${plainRule(line)}\n`));
  return new Promise((resolve) => lines.once('close', resolve));
}

/**
 * The operations of one document tested against one base URL. Schemathesis
 * tests every operation under --url and ignores a path's own `servers`: the
 * v2 document's /activity-stream paths (served at the root, as /oai is) are
 * run apart, against the service's origin.
 */
interface ContractRun {
  version: 'v1' | 'v2';
  base: string;
  filter: string[];
}

const ROOT_PATHS = '^/activity-stream';
const RUNS: ContractRun[] = [
  { version: 'v2', base: `${stack.apiUrl}/api/v2`, filter: ['--exclude-path-regex', ROOT_PATHS] },
  { version: 'v2', base: stack.apiUrl, filter: ['--include-path-regex', ROOT_PATHS] },
  { version: 'v1', base: `${stack.apiUrl}/api/v1`, filter: [] },
];

function runSchemathesis({ version, base, filter }: ContractRun, seeded: ContractData): Promise<boolean> {
  const args = [
    '--config-file',
    `${HOOKS_DIR}schemathesis.toml`,
    'run',
    `${stack.apiUrl}/api/${version}/openapi.json`,
    '--url',
    base,
    ...filter,
    '--checks',
    'all',
    '--header',
    `Authorization: Bearer ${BENCH_TOKEN}`,
    '--max-examples',
    MAX_EXAMPLES,
    '--seed',
    '20261123',
    // One worker: hypothesis's lambda descriptions race in CPython 3.11's parser under threads (SystemError).
    '--workers',
    '1',
    '--request-timeout',
    '60',
    '--no-color',
  ];
  process.stdout.write(`▶ schemathesis ${args.join(' ').replace(BENCH_TOKEN, '***')}\n`);
  return new Promise((resolve) => {
    const env = {
      ...process.env,
      PYTHONPATH: HOOKS_DIR,
      SCHEMATHESIS_HOOKS: 'hooks',
      CONTRACT_API_VERSION: version,
      CONTRACT_SEEDS: JSON.stringify(seeded),
    };
    const child = spawn(schemathesis, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const copied = Promise.all([copyOutput(child.stdout, process.stdout), copyOutput(child.stderr, process.stderr)]);
    child.once('exit', (code) => void copied.then(() => resolve(code === 0)));
  });
}

/** The API's and workers' log lines at level error or above (pino: 50, 60), for a failed run's report. */
function serverErrors(scratch: string): string {
  const lines = ['api', 'worker', 'interactiveWorker'].flatMap((name) => {
    try {
      return readFileSync(join(scratch, `${name}.log`), 'utf8')
        .split('\n')
        .filter((line) => /"level":(50|60)\b/.test(line))
        .map((line) => `${name}: ${line}`);
    } catch {
      return [];
    }
  });
  return lines.length === 0 ? '' : `service errors during the run:\n${lines.join('\n')}\n`;
}

let passed = 0;
let failed = 0;
try {
  const seeded = await seedContractData(stack);
  for (const run of RUNS) {
    if (await runSchemathesis(run, seeded)) passed += 1;
    else failed += 1;
  }
  // A 500 says only "see the server log for this request id": the log is in the stack's scratch directory, gone at stop.
  if (failed > 0) process.stdout.write(serverErrors(stack.scratch));
  if (stack.unexpectedExits.length > 0) {
    process.stdout.write(`a service process died during the run:\n${stack.unexpectedExits.join('\n')}\n${stack.logTail(40)}\n`);
    failed += 1;
  }
} finally {
  await stack.stop();
  await dropDatabase(stack.databaseUrl);
}
process.stdout.write(`contract: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed > 0 ? 1 : 0;
