// npm run bench:encoding [-- --seconds 5 --rounds 3]
//
// What a GET's body costs Node in the form the pg driver hands it over: a
// bare HTTP server (no database, no framework) answering a 3 KB v2-like
// document, decoded from the bytes PostgreSQL would send on every request
// as the driver decodes them, in two forms:
// - text: the document's own text (a few characters beyond U+00FF make it a
//   two-byte string), measured with Buffer.byteLength and written as UTF-8;
// - bytes: its UTF-8 bytes one character a byte (entity.document_bytes), a
//   one-byte string written as latin1.
// Prints requests a second and the server's CPU per request (the lean load
// generator, 16 connections, in this process). docs/decisions/0006 says
// why the stored document is held as its bytes.

import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { freePort } from '../scripts/lib/ports.ts';
import { commandOptions, isScript, loadAverage } from './lib/cli.ts';
import { runLoad } from './lib/http-load.ts';

type Form = 'text' | 'bytes';

/** About 3 KB, mostly ASCII, with the Czech names a registry holds. */
function sampleDocument(): string {
  const names = ['Božena Němcová', 'Karel Hynek Mácha', 'Jan Neruda', 'Bedřich Smetana', 'Antonín Dvořák'];
  const parts = names.map(
    (name, index) =>
      `<part partType="PT_NAME" uuid="00000000-0000-4000-8000-00000000000${index}"><item itemType="NM_MAIN" spec="">${name}</item><item itemType="NM_SUP_GEN">spisovatel, hudební skladatel</item></part>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?><entity xmlns="http://cz.tacr.elza/schema/v2" uuid="2f6a0c1e-3b1d-4b8e-9a57-1f2e3d4c5b6a" entityType="PERSON" state="ERS_APPROVED">${parts.join('').repeat(3)}</entity>`;
}

/** Serves the sample in one form on `port`; answers 'cpu' messages with its CPU time, µs. */
function serve(form: Form, port: number): void {
  const text = sampleDocument();
  // The bytes on PostgreSQL's wire for each form: the text's UTF-8, or the UTF-8 of its bytes read as Latin-1.
  const wire = form === 'text' ? Buffer.from(text, 'utf8') : Buffer.from(Buffer.from(text, 'utf8').toString('latin1'), 'utf8');
  const server = createServer((_request, response) => {
    const body = wire.toString('utf8');
    if (form === 'text') {
      response.writeHead(200, { 'Content-Type': 'application/xml', 'Content-Length': String(Buffer.byteLength(body)) });
      response.end(body);
    } else {
      response.writeHead(200, { 'Content-Type': 'application/xml', 'Content-Length': String(body.length) });
      response.end(body, 'latin1');
    }
  });
  server.listen(port, '127.0.0.1', () => process.send!('listening'));
  process.on('message', (message) => {
    if (message !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send!({ cpu: user + system });
  });
}

async function measure(form: Form, port: number, seconds: number): Promise<{ rate: number; cpuMicros: number }> {
  const server = fork(new URL(import.meta.url).pathname, ['--serve', form, String(port)]);
  try {
    await new Promise((resolve) => server.once('message', resolve));
    const cpu = () =>
      new Promise<number>((resolve) => {
        server.once('message', (message) => resolve((message as { cpu: number }).cpu));
        server.send('cpu');
      });
    const run = { baseUrl: `http://127.0.0.1:${port}`, paths: ['/'], connections: 16, headers: () => [] };
    await runLoad({ ...run, seconds: 1 });
    const before = await cpu();
    const result = await runLoad({ ...run, seconds });
    const after = await cpu();
    if (result.errors > 0) throw new Error(`${form}: ${result.errors} failed requests`);
    return { rate: result.requests / result.seconds, cpuMicros: (after - before) / result.requests };
  } finally {
    server.kill();
  }
}

if (isScript(import.meta)) {
  if (process.argv[2] === '--serve') {
    serve(process.argv[3] as Form, Number(process.argv[4]));
  } else {
    const options = commandOptions({ seconds: '5', rounds: '3' });
    for (let round = 1; round <= Number(options.rounds); round += 1) {
      for (const form of ['text', 'bytes'] as const) {
        const { rate, cpuMicros } = await measure(form, await freePort(), Number(options.seconds));
        process.stdout.write(
          `round ${round}, ${form.padEnd(5)}: ${rate.toFixed(0)} req/s, server CPU ${cpuMicros.toFixed(1)} µs a response; load ${loadAverage()}\n`,
        );
      }
    }
  }
}
