// The README's walkthrough, run as written: a fresh `npm start` (its own
// Temporal dev server, an empty database, the generated admin token) in a
// folder that mirrors the project's (every entry a symlink, except .data),
// then every command of the sections meant to be pasted (Walkthrough, The
// API, Search), in order, in one bash; and all of it once more on the same
// database, as a reader runs it again. Nothing of the commands is edited:
// the service listens on a free port instead of 8080, and the shell has that
// PORT exported, as the README tells a reader who started `npm start` on
// another port (so every command reaches it through $ENTITY_RECORDS_URL);
// the shell's DATABASE_URL is the one `npm start` got, so `npm run
// db:reset` empties this run's. PATH lacks npm's node_modules/.bin, as in a
// plain terminal: the CLI must bring its own Node. The assertions are about
// outcomes (written, readable, found, exported), not the CLI's wording.
// Last, npm alone is killed, as a reader might: everything it started ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { validateDocument } from '../../engine/validation/index.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { eventually } from '../support/poll.ts';
import { PASTED_SECTIONS, readmeSection, recordingScript, shellCommands, type ReadmeCommand } from '../support/readme-commands.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Not mirrored: the run's own data, and what a reader's own runs left behind. */
const NOT_MIRRORED = new Set(['.data', '.git', 'walkthrough']);

const KAREL = '5cd88563-6fea-41f1-948a-9a22da47589e';
const JOSEF = '95adcfa1-697e-4c5c-a722-2e80dbafdb23';
const NEMCOVA = '4c8f62f0-128f-48d9-8baf-f0183438475a';
const CLUB = 'bfa24999-0634-4f45-8e78-8c56a4344733';
const NAMESAKE = '7d8263cc-9407-4a25-9af5-fdfb9959732f';
const NAMELESS = '2b3a2859-42ff-4909-82a5-9e6c8219c813';
const FIRST_BATCH = '7bdfc3dd-ee72-4efc-a423-9993a6230643';
const V1 = {
  tgm: '2c99bcdf-b0d8-4cdc-9708-a14996682157',
  alice: '78e88b3a-5a41-4b12-9567-898d3487eed5',
  namesake: 'a48d55a7-eef2-4b05-9c67-568d61973a1d',
};

interface Outcome extends ReadmeCommand {
  code: number;
  stdout: string;
  stderr: string;
}

describe('README walkthrough', () => {
  let folder: string;
  let databaseName: string;
  let databaseUrl: string;
  let baseUrl: string;
  let port: number;
  let stack: ChildProcess | undefined;
  let stackExit: Promise<unknown> | undefined;
  let token: string;

  const api = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(`${baseUrl}${path}`, { ...init, headers });
  };

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'entity-records-walkthrough-'));
    for (const entry of readdirSync(ROOT)) if (!NOT_MIRRORED.has(entry)) symlinkSync(join(ROOT, entry), join(folder, entry));
    mkdirSync(join(folder, '.data'));

    const url = new URL(inject('databaseUrl'));
    databaseName = `er_walkthrough_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${databaseName}`;
    databaseUrl = url.toString();

    const [temporalPort, temporalUiPort] = [await freePort(), await freePort()];
    port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env = cleanEnv({
      PORT: String(port),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(temporalUiPort),
      DATABASE_URL: databaseUrl,
      DATA_DIR: join(folder, '.data'),
      LOG_LEVEL: 'warn',
    });
    // A file, not a pipe: the commands below run synchronously, and a full pipe would stall the service.
    const log = join(folder, '.data', 'npm-start.log');
    const logFd = openSync(log, 'a');
    stack = spawn('npm', ['start'], { cwd: folder, env, detached: true, stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    stackExit = once(stack, 'exit');
    let exited = false;
    void stackExit.then(() => (exited = true));
    await eventually(async () => {
      if (exited) throw new Error(`npm start exited:\n${readFileSync(log, 'utf8')}`);
      const health = await fetch(`${baseUrl}/health`).catch(() => undefined);
      return health?.ok ? true : undefined;
    }, 240_000);
    token = readFileSync(join(folder, '.data', 'secrets', 'admin-token'), 'utf8').trim();
  }, 300_000);

  afterAll(async () => {
    if (stack?.pid !== undefined && stack.exitCode === null) {
      process.kill(-stack.pid, 'SIGINT');
      const stopped = await Promise.race([stackExit, new Promise((resolve) => setTimeout(() => resolve('timeout'), 60_000))]);
      if (stopped === 'timeout') process.kill(-stack.pid, 'SIGKILL');
    }
    // What a failed test of the stop left running.
    if (stack?.pid !== undefined && livingInGroup(stack.pid).length > 0) process.kill(-stack.pid, 'SIGKILL');
    if (databaseName) {
      const admin = new URL(withDatabaseUser(databaseUrl));
      admin.pathname = '/postgres';
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`drop database if exists ${pg.escapeIdentifier(databaseName)} with (force)`);
      await client.end();
    }
    if (folder) rmSync(folder, { recursive: true, force: true });
  }, 120_000);

  /** Pastes every command of the README's PASTED_SECTIONS, in order, into one bash, and collects each one's outcome. */
  async function paste(run: number): Promise<Outcome[]> {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const commands = PASTED_SECTIONS.flatMap((section) => shellCommands(readmeSection(readme, section)));
    for (const { line } of commands)
      expect(line, 'every command reaches the service through $ENTITY_RECORDS_URL').not.toMatch(/127\.0\.0\.1:8080/);
    const outDir = join(folder, '.data', `walkthrough-output-${run}`);
    mkdirSync(outDir);
    // Not spawnSync: a blocked event loop would let this process's idle keep-alive sockets outlive the server's timeout.
    const shell = spawn('bash', ['-c', recordingScript(commands, outDir)], {
      cwd: folder,
      // The README's advice for another port: the same PORT in this terminal. No ENTITY_RECORDS_URL: the README sets it.
      env: { ...cleanEnv({}), PORT: String(port), DATABASE_URL: databaseUrl },
      stdio: 'ignore',
      timeout: 600_000,
    });
    const [code, signal] = (await once(shell, 'exit')) as [number | null, NodeJS.Signals | null];
    if (signal) throw new Error(`the walkthrough's shell was stopped (${signal}) after ${readdirSync(outDir).length / 3} commands`);
    expect(code).not.toBeNull();
    return commands.map((command, index) => ({
      ...command,
      code: Number(readFileSync(join(outDir, `${index}.code`), 'utf8').trim()),
      stdout: readFileSync(join(outDir, `${index}.out`), 'utf8'),
      stderr: readFileSync(join(outDir, `${index}.err`), 'utf8'),
    }));
  }

  for (const run of [1, 2]) {
    describe(run === 1 ? 'pasted on a fresh npm start' : 'pasted again, on the same database', () => {
      let outcomes: Outcome[] = [];
      const outcomeOf = (pattern: RegExp): Outcome => {
        const found = outcomes.find((outcome) => pattern.test(outcome.line));
        if (!found) throw new Error(`the README has no command matching ${pattern}`);
        return found;
      };

      beforeAll(async () => {
        outcomes = await paste(run);
      }, 900_000);

      it('runs every command with the exit code the README gives it, and without a warning to ignore', () => {
        expect(outcomes.length).toBeGreaterThan(15);
        for (const outcome of outcomes) {
          expect(outcome.code, `${outcome.line}\n${outcome.stderr}`).toBe(outcome.expectedExit);
          expect(outcome.stderr, outcome.line).not.toMatch(/npm warn|EBADENGINE|ExperimentalWarning/i);
        }
      });

      it('starts from an empty database', () => {
        expect(outcomeOf(/db:reset/).stdout).toMatch(
          run === 1 ? /0 records, 0 batches/ : /[1-9]\d* records, [1-9]\d* batches and [1-9]\d* exports/,
        );
      });

      it('writes the first batch: four records, readable by number and UUID', async () => {
        const result = await api(`/api/v2/batches/${FIRST_BATCH}/result`);
        expect(await result.text()).toContain('<batchChangeSuccess');
        for (const uuid of [KAREL, JOSEF, NEMCOVA, CLUB]) expect((await api(`/api/v2/entities/${uuid}`)).status, uuid).toBe(200);
        expect(outcomeOf(/entity get 1$/).stdout).toContain(KAREL);
        expect(outcomeOf(new RegExp(`entity get ${JOSEF}$`)).stdout).toContain('Josef');
      });

      it('finds the records by name, whatever the case and accents, with the CLI and with curl', () => {
        const count = Number(/<count>(\d+)<\/count>/.exec(outcomeOf(/search --name capek/).stdout)?.[1]);
        expect(count).toBeGreaterThanOrEqual(2);
        // Karel and Josef Čapek and Karel's namesake, as the Search section says.
        expect(outcomeOf(/api\/v2\/search/).stdout).toContain('<count>3</count>');
      });

      it('applies the update and the state change built on the current revs', async () => {
        expect(await (await api(`/api/v2/entities/${KAREL}`)).text()).toContain('Dacier');
        expect(await (await api(`/api/v2/entities/${JOSEF}`)).text()).toMatch(/state="E?RS_APPROVED"/);
      });

      it('refuses the warnings-only batch with a force key, then writes it with that key', async () => {
        expect(readFileSync(join(folder, 'walkthrough', '04-refused.xml'), 'utf8')).toMatch(/<forceKey>[^<]+<\/forceKey>/);
        expect((await api(`/api/v2/entities/${NAMESAKE}`)).status).toBe(200);
      });

      it('writes nothing of the invalid batch, neither tested nor submitted', async () => {
        expect(outcomeOf(/batch test examples\/v2\/05-invalid/).stderr).toMatch(/2 errors/);
        expect((await api(`/api/v2/entities/${NAMELESS}`)).status).toBe(404);
      });

      it('lists what changed after the first batch, and exports the records and their changes', async () => {
        const updates = outcomeOf(/updates --from/).stdout;
        for (const uuid of [KAREL, JOSEF, NAMESAKE]) expect(updates, uuid).toContain(uuid);
        expect(updates).not.toContain(NEMCOVA);

        const snapshot = readFileSync(join(folder, 'walkthrough', 'snapshot.xml'));
        await validateDocument(snapshot, 'v2');
        for (const uuid of [KAREL, JOSEF, NEMCOVA, CLUB]) expect(snapshot.toString('utf8'), uuid).toContain(uuid);
        const revisions = readFileSync(join(folder, 'walkthrough', 'revisions.xml'));
        await validateDocument(revisions, 'v2');
        expect(revisions.toString('utf8')).toContain('Dacier');
      });

      it('shows the first Activity Streams page and the commits since the first batch on the push stream', () => {
        const page = JSON.parse(outcomeOf(/activity-stream\/page\/0-0/).stdout) as {
          type: string;
          orderedItems: { type: string; object: { id: string } }[];
        };
        expect(page.type).toBe('OrderedCollectionPage');
        expect(page.orderedItems.some((activity) => activity.type === 'Create' && activity.object.id.endsWith('/global/1'))).toBe(true);
        const stream = outcomeOf(/api\/v2\/stream/).stdout;
        expect(stream).toMatch(/^event: commit$/m);
        // The update of Karel Čapek (record 1) came after the first batch.
        expect(stream).toMatch(/^data: \{"summary":"Update [^"]* 1"/m);
      });

      it('runs the v1 series as the README gives it: create, update and approve on the current rid, a namesake and an invalid batch refused', async () => {
        const answers = outcomes
          .filter((outcome) => /^post_v1 /.test(outcome.line))
          .map((outcome) => /<(bus|bue)[\s>]/.exec(outcome.stdout)?.[1]);
        expect(answers).toEqual(['bus', 'bus', 'bus', 'bue', 'bue']);
        expect(await (await api(`/api/v2/entities/${V1.tgm}`)).text()).toContain('prezident republiky');
        expect(await (await api(`/api/v2/entities/${V1.alice}`)).text()).toMatch(/state="E?RS_APPROVED"/);
        expect((await api(`/api/v2/entities/${V1.namesake}`)).status).toBe(404);
      });
    });
  }

  it('stops everything npm start started when npm alone is killed (no signal reaches the start script)', async () => {
    // The process group holds npm, the start script, Temporal, the workers and the API.
    process.kill(stack!.pid!, 'SIGTERM');
    await stackExit;
    await eventually(async () => (livingInGroup(stack!.pid!).length > 0 ? undefined : true), 120_000);
    expect(await fetch(`${baseUrl}/health`).catch(() => 'refused')).toBe('refused');
  }, 180_000);
});

/** The processes of group `pgid` that still run (a zombie waiting for its parent to read its exit runs nothing), from /proc. */
function livingInGroup(pgid: number): string[] {
  const living: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after its last ')'.
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(group) === pgid && state !== 'Z') living.push(`${entry} ${stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1)}`);
  }
  return living;
}

/** The environment of a plain terminal: none of the test run's settings, no npm-provided PATH entries. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|NODE_|VITEST|TEST_|AUTH_|TEMPORAL_|DATABASE_URL$|PORT$|HOST$|DATA_DIR$|ENTITY_RECORDS_)/.test(key)) continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes('node_modules'))
    .join(delimiter);
  return { ...env, ...extra };
}
