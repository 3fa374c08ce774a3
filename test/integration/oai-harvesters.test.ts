// Real harvesters from PyPI against the real stack (installed, pinned, into
// the project's .venv/ by scripts/lib/venv.ts): Sickle harvests the whole
// registry by ListRecords and ListIdentifiers and gets every record once;
// oaipmh-scythe runs every verb by GET and by POST and parses each answer;
// pyoai's client runs Identify, ListMetadataFormats and GetRecord (by POST,
// its default).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureVenvPackages } from '../../scripts/lib/venv.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';

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

/** Runs one command of harvesters.py; its JSON, or the harvester's traceback as the failure. */
async function harvester<T>(...args: string[]): Promise<T> {
  const child = spawn(args[0] === 'pyoai' ? pyoaiPython : python, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`harvesters.py ${args.join(' ')} exited ${code}:\n${err}`);
  return JSON.parse(out) as T;
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
  harness = await startHarness({ env: { OAI_PMH: 'bearer', OAI_REPOSITORY_ID: REPOSITORY, OAI_PAGE_SIZE: '3' } });
  endpoint = `${harness.baseUrl}/oai`;
  const created = await applyBatch(harness, batchXml(Array.from({ length: 7 }, (_, index) => create(`r${index}`, `Harvested ${index}`, { entityType: TYPE }))));
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

describe('oaipmh-scythe', () => {
  it('runs every verb, by GET and by POST, and parses every answer', async () => {
    const seen = await harvester<Record<'GET' | 'POST', { repositoryName: string; formats: string[]; sets: string[]; identifiers: number; oai_dc: number; 'cam-2025': number; record: string }>>(
      'scythe',
      endpoint,
      `oai:${REPOSITORY}:${uuids[0]}`,
      TEST_TOKENS.read,
    );
    const entities = Number((await harness.sql<{ n: string }>('select count(*) as n from entity'))[0]!.n);
    for (const method of ['GET', 'POST'] as const) {
      expect(seen[method]).toMatchObject({ repositoryName: 'Entity Records Service', formats: ['oai_dc', 'cam-2025'], identifiers: entities, oai_dc: entities, 'cam-2025': entities, record: `oai:${REPOSITORY}:${uuids[0]}` });
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
        formats: ['oai_dc', 'cam-2025'],
        identifier: `oai:${REPOSITORY}:${uuids[1]}`,
        title: ['Harvested 1'],
        type: [TYPE],
      });
    } finally {
      await open.close();
    }
  });
});
