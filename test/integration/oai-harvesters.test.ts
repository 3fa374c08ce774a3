// Real harvesters from PyPI against the real stack (installed, pinned, into
// the project's .venv/ by scripts/lib/venv.ts): Sickle harvests the whole
// registry by ListRecords and ListIdentifiers and gets every record once;
// oaipmh-scythe runs every verb by GET and by POST and parses each answer;
// pyoai's client runs Identify, ListMetadataFormats and GetRecord (by POST,
// its default).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureVenvPackages } from '../../scripts/lib/venv.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { readmeSection } from '../support/readme-commands.ts';

/** The harvesters, pinned. */
const HARVESTERS = { sickle: '0.7.0', 'oaipmh-scythe': '0.16.0' } as const;
/**
 * pyoai calls lxml's XPathEvaluator.evaluate, which lxml 5 removed, while
 * oaipmh-scythe needs lxml 5.3 or later: pyoai gets a virtualenv of its own
 * (.venv/envs/pyoai) with the last lxml it runs on.
 */
const PYOAI = { pyoai: '2.5.0', lxml: '4.9.4' } as const;
const SCRIPT = fileURLToPath(new URL('../support/oai/harvesters.py', import.meta.url));
const REPOSITORY = 'harvest.example.org';
const TYPE = `OAI_H_${randomUUID().slice(0, 8)}`;

let harness: Harness;
let python: string;
let pyoaiPython: string;
let endpoint: string;
const uuids: string[] = [];

/** Runs a Python program with `env` added; its output, or its traceback as the failure. */
async function runPython(interpreter: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn(interpreter, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${args.join(' ').slice(0, 200)} exited ${code}:\n${err}`);
  return out;
}

/** Runs one command of harvesters.py; its JSON, or the harvester's traceback as the failure. */
async function harvester<T>(...args: string[]): Promise<T> {
  return JSON.parse(await runPython(args[0] === 'pyoai' ? pyoaiPython : python, [SCRIPT, ...args])) as T;
}

interface SickleItem {
  identifier: string;
  datestamp: string;
  deleted: boolean;
  sets: string[];
  metadata?: boolean;
}

beforeAll(async () => {
  python = ensureVenvPackages(HARVESTERS);
  pyoaiPython = ensureVenvPackages(PYOAI, 'pyoai');
  // Pages of 200: several pages in a full test run (thousands of records), where pages of 3 ran past a minute; oai.test.ts pages by 2.
  harness = await startHarness({ env: { OAI_PMH: 'bearer', OAI_REPOSITORY_ID: REPOSITORY, OAI_PAGE_SIZE: '200' } });
  endpoint = `${harness.baseUrl}/oai`;
  const created = await applyBatch(
    harness,
    batchXml(Array.from({ length: 7 }, (_, index) => create(`r${index}`, `Harvested ${index}`, { entityType: TYPE }))),
  );
  for (const revision of created.revisions.values()) uuids.push(revision.entityUuid);
  // One record deleted (invalidated): Sickle must get its header too.
  const gone = created.revisions.get('r6')!;
  await applyBatch(harness, batchXml([update('r6', gone.entityId, gone.rev, [{ op: 'setState', state: 'ERS_INVALID' }])]));
}, 600_000);

afterAll(async () => harness?.close());

describe('Sickle', () => {
  it.each(['ListRecords', 'ListIdentifiers'])('%s harvests the whole registry, every record once', async (verb) => {
    const all = (await harness.sql<{ uuid: string }>('select uuid from entity order by id')).map((row) => `oai:${REPOSITORY}:${row.uuid}`);
    for (const prefix of ['oai_dc', 'cam-2025']) {
      const { items } = await harvester<{ items: SickleItem[] }>('sickle', endpoint, verb, prefix, '', TEST_TOKENS.read);
      expect(items.map((item) => item.identifier)).toEqual(all);
      const deleted = items.filter((item) => item.deleted).map((item) => item.identifier);
      expect(deleted).toContain(`oai:${REPOSITORY}:${uuids[6]}`);
      const ours = items.filter((item) => item.sets.includes(`type:${TYPE}`));
      expect(ours).toHaveLength(7);
      // Metadata for every record but the deleted ones.
      if (verb === 'ListRecords') for (const item of items) expect(item.metadata, item.identifier).toBe(!item.deleted);
    }
  });
});

describe("the README's Sickle example", () => {
  it('runs as written against the stack (at the address of the test) and prints every record once, deleted ones as deleted', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const program = /```python\n([\s\S]*?)```/.exec(readmeSection(readme, 'Harvesting (OAI-PMH)'))![1]!;
    expect(program).toContain('http://127.0.0.1:8080/oai');
    const out = await runPython(python, ['-c', program.replace('http://127.0.0.1:8080', harness.baseUrl)], {
      ENTITY_RECORDS_TOKEN: TEST_TOKENS.read,
    });
    const lines = out.trimEnd().split('\n');
    const all = (await harness.sql<{ uuid: string }>('select uuid from entity order by id')).map((row) => `oai:${REPOSITORY}:${row.uuid}`);
    expect(lines.map((line) => line.split(' ')[0])).toEqual(all);
    expect(lines).toContain(lines.find((line) => line.startsWith(`oai:${REPOSITORY}:${uuids[6]} `) && line.endsWith(' deleted')));
    expect(lines.find((line) => line.startsWith(`oai:${REPOSITORY}:${uuids[0]} `))).toMatch(/ Harvested 0$/);
  });
});

describe('oaipmh-scythe', () => {
  it('runs every verb, by GET and by POST, and parses every answer', async () => {
    // The lists of this file's set: Sickle harvests the whole registry above, and six more whole harvests here cost
    // what the rest of the run wrote (past a minute on a busy machine).
    const seen = await harvester<
      Record<
        'GET' | 'POST',
        {
          repositoryName: string;
          formats: string[];
          sets: string[];
          identifiers: number;
          oai_dc: number;
          'cam-2025': number;
          record: string;
        }
      >
    >('scythe', endpoint, `oai:${REPOSITORY}:${uuids[0]}`, `type:${TYPE}`, TEST_TOKENS.read);
    for (const method of ['GET', 'POST'] as const) {
      // The set's 7 records, the deleted one among them (its header).
      expect(seen[method]).toMatchObject({
        repositoryName: 'Entity Records Service',
        formats: ['oai_dc', 'cam-2025', 'eac-cpf'],
        identifiers: 7,
        oai_dc: 7,
        'cam-2025': 7,
        record: `oai:${REPOSITORY}:${uuids[0]}`,
      });
      expect(seen[method].sets).toContain(`type:${TYPE}`);
    }
  });
});

describe('pyoai', () => {
  it('runs Identify, ListMetadataFormats and GetRecord', async () => {
    // pyoai's client sends no Authorization header: it harvests a public endpoint.
    const open = await startHarness({ worker: false, env: { OAI_PMH: 'public', OAI_REPOSITORY_ID: REPOSITORY } });
    try {
      const answer = await harvester<Record<string, unknown>>('pyoai', `${open.baseUrl}/oai`, `oai:${REPOSITORY}:${uuids[1]}`);
      expect(answer).toMatchObject({
        repositoryName: 'Entity Records Service',
        granularity: 'YYYY-MM-DDThh:mm:ssZ',
        deletedRecord: 'persistent',
        formats: ['oai_dc', 'cam-2025', 'eac-cpf'],
        identifier: `oai:${REPOSITORY}:${uuids[1]}`,
        title: ['Harvested 1'],
        type: [TYPE],
      });
    } finally {
      await open.close();
    }
  });
});
