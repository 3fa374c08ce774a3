// The entity-records CLI as a child process against the running harness.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unreachableHint } from '../../cli/client.ts';
import { EXIT_MEANINGS } from '../../cli/errors.ts';
import { validateDocument } from '../../engine/validation/index.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

const CLI = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/validation/', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('entity-records CLI', () => {
  let harness: Harness;
  let dir: string;
  const entityType = `T-${randomUUID()}`;
  const name = `Klient ${randomUUID().slice(0, 8)}`;
  type Created = { entityId: number; entityUuid: string; metadataRev: string; transaction: string };
  let created: Created;

  function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          env: { ...process.env, ENTITY_RECORDS_URL: harness.baseUrl, ENTITY_RECORDS_TOKEN: TEST_TOKENS.admin, ...env },
          maxBuffer: 64 * 1024 * 1024,
        },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
  }

  function file(name: string, content: string): string {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  }

  /** A batch that completes, through the CLI; returns what its result says about the one record it creates. */
  async function createRecord(recordName: string): Promise<Created> {
    const run = await cli(['batch', 'submit', file(`${randomUUID()}.xml`, batchXml([create('a', recordName, { entityType })])), '--wait']);
    expect(run.code, run.stderr).toBe(0);
    return createdBy(run.stdout);
  }

  function createdBy(result: string): Created {
    const revision = /<revision localId="a" entityId="(\d+)" entityUuid="([^"]+)" rev="[^"]+" metadataRev="([^"]+)"/.exec(result)!;
    return {
      entityId: Number(revision[1]),
      entityUuid: revision[2]!,
      metadataRev: revision[3]!,
      transaction: /transaction="([^"]+)"/.exec(result)![1]!,
    };
  }

  beforeAll(async () => {
    harness = await startHarness();
    dir = mkdtempSync(join(tmpdir(), 'entity-records-cli-'));
  });

  afterAll(async () => {
    await harness?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('submits a batch with --wait: exit 0, the result XML on stdout, a summary and no progress bars on stderr', async () => {
    const run = await cli(['batch', 'submit', file('ok.xml', batchXml([create('a', name, { entityType })])), '--wait']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^<\?xml[^>]*\?>\s*<batchChangeSuccess /);
    expect(run.stderr).toContain('COMPLETED: 1 revision written');
    // stderr is a pipe here: no bars, no escape sequences, a line or two of messages.
    expect(run.stderr).not.toContain('\u001b[');
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
    created = createdBy(run.stdout);
  });

  it('submits without --wait (the id on stdout), then reads status and result of that batch', async () => {
    const submitted = await cli([
      'batch',
      'submit',
      file('later.xml', batchXml([create('a', `Později ${randomUUID().slice(0, 8)}`, { entityType })])),
    ]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const status = await eventually(async () => {
      const run = await cli(['batch', 'status', id]);
      expect(run.code, run.stderr).toBe(0);
      const read = JSON.parse(run.stdout) as { status: string };
      return read.status === 'COMPLETED' || read.status === 'FAILED' ? read : undefined;
    }, 60_000);
    expect(status.status).toBe('COMPLETED');
    const result = await cli(['batch', 'result', id]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('<batchChangeSuccess');
  });

  it('exits 1 for a batch that fails, printing its failure result', async () => {
    const xml = batchXml([update('bad', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])]);
    const run = await cli(['batch', 'submit', file('bad.xml', xml), '--wait']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('<batchChangeFailure');
    expect(run.stderr).toMatch(/FAILED: [1-9]\d* errors?/);
  });

  it('exits 1 for a batch the server refuses as invalid, with the problem detail', async () => {
    const run = await cli(['batch', 'submit', file('broken.xml', '<batchUpdate')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('400 InvalidXml');
  });

  it('runs a test batch: exit 0, says what it would write and that nothing was written', async () => {
    const testName = `Zkouška ${randomUUID()}`;
    const run = await cli(['batch', 'test', file('test.xml', batchXml([create('a', testName, { entityType })]))]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('<batchChangeSuccess');
    expect(run.stderr).toContain('test batch passed: it would write 1 revision; nothing was written');
    // Its transaction was rolled back and never exists: the summary must not name it.
    expect(run.stderr).not.toMatch(/transaction|written in/);
    const found = await cli(['search', '--name', testName]);
    expect(found.stdout).toMatch(/count="0"|<count>0<\/count>/);
  });

  it('exits 2 on usage errors: unknown command, missing argument, bad identifier, bad choice', async () => {
    for (const args of [
      ['frobnicate'],
      ['batch', 'submit'],
      ['entity', 'get', 'not-an-id'],
      ['search', '--state', 'ERS_BOGUS'],
      ['export', 'snapshot', '--out', join(dir, 'x.xml')],
    ]) {
      const run = await cli(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/error/);
      expect(run.stdout).toBe('');
    }
    expect((await cli(['--help'])).code).toBe(0);
  });

  it('exits 3 when the server cannot be reached, and 4 for a request the server refuses (401, 404), with the problem detail', async () => {
    const closed = await freePort();
    const unreachable = await cli(['entity', 'get', '1'], { ENTITY_RECORDS_URL: `http://127.0.0.1:${closed}` });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain('cannot reach');
    expect(unreachable.stderr).toContain('ECONNREFUSED');
    expect(unreachable.stderr).toMatch(/ENTITY_RECORDS_URL gives.*--url overrides it/);
    const byOption = await cli(['--url', `http://127.0.0.1:${closed}`, 'entity', 'get', '1']);
    expect(byOption.code).toBe(3);
    expect(byOption.stderr).toContain('the address --url gives');
    // The default address: whatever runs on 8080 here, the hint names both ways to another one.
    expect(unreachableHint('default')).toMatch(/--url or ENTITY_RECORDS_URL/);

    const missing = await cli(['entity', 'get', '999999999']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('404 EntityNotFound');

    const anonymous = await cli(['entity', 'get', String(created.entityId)], { ENTITY_RECORDS_TOKEN: '' });
    expect(anonymous.code).toBe(4);
    expect(anonymous.stderr).toContain('401 Unauthorized');
    expect(anonymous.stderr).toContain('no Authorization header');
    // The server's advice names the header; the CLI says how it is given a token.
    expect(anonymous.stderr).toContain('ENTITY_RECORDS_TOKEN');
    expect(anonymous.stderr).toContain('--token');

    const wrong = await cli(['entity', 'get', String(created.entityId)], { ENTITY_RECORDS_TOKEN: 'not-a-configured-token' });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('the bearer token matches no token configured on this server');
    expect(wrong.stderr).not.toContain('no token was given');
  });

  it('lists every exit code in --help', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const [code, meaning] of Object.entries(EXIT_MEANINGS)) expect(help.stdout).toContain(`  ${code}  ${meaning}`);
  });

  it('ends every XML document it prints with a newline', async () => {
    const runs = {
      entity: await cli(['entity', 'get', String(created.entityId)]),
      search: await cli(['search', '--name', name.split(' ')[1]!, '--type', entityType]),
      updates: await cli(['updates', '--from', created.transaction]),
      test: await cli(['batch', 'test', file('newline.xml', batchXml([create('a', `Řádek ${randomUUID()}`, { entityType })]))]),
    };
    for (const [command, run] of Object.entries(runs)) {
      expect(run.code, `${command}: ${run.stderr}`).toBe(0);
      expect(run.stdout, command).toMatch(/^<\?xml[\s\S]*>\n$/);
    }
  });

  it('gets an entity by number and UUID, and in one revision', async () => {
    for (const id of [String(created.entityId), created.entityUuid]) {
      const run = await cli(['entity', 'get', id]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('<entity ');
      expect(run.stdout).toContain(name);
    }
    const revision = await cli(['entity', 'get', String(created.entityId), '--revision', created.metadataRev]);
    expect(revision.code, revision.stderr).toBe(0);
    expect(revision.stdout).toContain(`<metadataRev>${created.metadataRev}</metadataRev>`);
    expect((await cli(['entity', 'get', String(created.entityId), '--revision', randomUUID()])).stderr).toContain('404 RevisionNotFound');
  });

  it('searches by name (CT_CONTAINS on the DISPLAY_NAME index), type and state, pages counted from 1', async () => {
    const run = await cli([
      'search',
      '--name',
      name.split(' ')[1]!,
      '--type',
      entityType,
      '--state',
      'RS_NEW',
      'ERS_APPROVED',
      '--page',
      '1',
      '--page-size',
      '10',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('<queryResult');
    expect(run.stdout).toContain(name);
    const secondPage = await cli(['search', '--name', name.split(' ')[1]!, '--type', entityType, '--page', '2', '--page-size', '10']);
    expect(secondPage.code, secondPage.stderr).toBe(0);
    expect(secondPage.stdout).not.toContain(name);
    const none = await cli(['search', '--name', `nic-${randomUUID()}`, '--type', entityType]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).not.toContain(name);
    expect(none.stderr).not.toContain('warning');
    expect((await cli(['search', '--page', '0'])).code).toBe(2);
  });

  it('warns of entity types no record has, and still prints the answer', async () => {
    const typo = `${entityType}S`;
    const run = await cli(['search', '--type', entityType, typo]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(name);
    expect(run.stderr).toContain(`warning: no record has the entity type ${typo}`);
  });

  it('lists updates after a transaction, and between two as one document over several pages', async () => {
    const first = await createRecord(`První ${randomUUID().slice(0, 8)}`);
    const second = await createRecord(`Druhý ${randomUUID().slice(0, 8)}`);
    const from = await cli(['updates', '--from', created.transaction]);
    expect(from.code, from.stderr).toBe(0);
    expect(from.stdout).toContain('<updatesFrom');
    expect(from.stdout).toContain(`entityId="${second.entityId}"`);

    const between = await cli(['updates', '--from', created.transaction, '--to', second.transaction, '--page-size', '1']);
    expect(between.code, between.stderr).toBe(0);
    expect(between.stdout.match(/<updates[\s>]/g)).toHaveLength(1);
    expect(between.stdout.match(/<\/updates>/g)).toHaveLength(1);
    expect(between.stdout).toContain(`entityId="${first.entityId}"`);
    expect(between.stdout).toContain(`entityId="${second.entityId}"`);
    await validateDocument(Buffer.from(between.stdout), 'v2');
  });

  it('exports a snapshot to --out: the file is written, verified and valid against the 2025 schema', async () => {
    const out = join(dir, 'snapshot.xml');
    const run = await cli(['export', 'snapshot', String(created.entityId), created.entityUuid, '999999998', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      status: string;
      sha256: string;
      file: string;
      missing: string[];
      entitiesWritten: number;
      workflow: { status: string };
    };
    // The export and its workflow both done: the command waits the moment between the two.
    expect(summary).toMatchObject({ status: 'COMPLETED', file: out, missing: ['999999998'], workflow: { status: 'COMPLETED' } });
    expect(run.stderr).toContain('SHA-256 verified');
    const bytes = readFileSync(out);
    expect(bytes.toString()).toContain(name);
    await validateDocument(bytes, 'v2');
  });

  it('exports revisions after a transaction', async () => {
    const out = join(dir, 'revisions.xml');
    const later = await createRecord(`Revize ${randomUUID().slice(0, 8)}`);
    const run = await cli(['export', 'revisions', '--from', created.transaction, String(later.entityId), '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const bytes = readFileSync(out);
    expect(bytes.toString()).toContain('<entityRecordRevisions');
    await validateDocument(bytes, 'v2');
  });

  it('validates batch files offline like npm run validate: 0 for a good one, 1 for a bad one, 2 for a missing one', async () => {
    const good = await cli(['validate', join(FIXTURES, 'v2-all-changes.xml')], { ENTITY_RECORDS_URL: 'http://127.0.0.1:9' });
    expect(good.code, good.stderr).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ valid: true, version: 'v2' });

    const bad = await cli([
      'validate',
      file('invalid.xml', batchXml([create('a', 'Špatný')]).replace('<batchUpdate ', '<batchUpdate bogus="1" ')),
    ]);
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as { valid: boolean; errors: Array<{ line: number; message: string }> };
    expect(report.valid).toBe(false);
    expect(report.errors).toHaveLength(1);
    expect(bad.stderr).toContain('is not a valid batch (1 problem)');

    expect((await cli(['validate', join(dir, 'no-such-file.xml')])).code).toBe(2);
  });
});
