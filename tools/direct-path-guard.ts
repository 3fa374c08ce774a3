// npm run lint runs this. The direct GET of a current record (api/reads/entity-get.ts,
// decision 0078) is answered in front of Koa's chain, so a middleware added to
// api/app.ts would not reach that GET. api/reads/direct-get-mirrors.ts names every
// middleware of the chain with what the direct path does about it; this fails when
// app.ts uses one the list does not name, or the list names one app.ts no longer uses.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DIRECT_GET_STANCES } from '../api/reads/direct-get-mirrors.ts';

/** The name each `app.use(...)` of the source gives its middleware: the factory called, or the router method. */
export function chainMiddlewareNames(appSource: string): string[] {
  const names: string[] = [];
  for (const match of appSource.matchAll(/\bapp\.use\(\s*([^)]*)/g)) {
    const call = match[1]!.trim();
    const method = /^\w+\.(\w+)\(/.exec(call);
    const factory = /^(\w+)\(/.exec(call);
    names.push(method?.[1] ?? factory?.[1] ?? call);
  }
  return names;
}

/** The problems of a chain against the declared stances: unnamed middleware, and stances for middleware gone. */
export function directPathProblems(appSource: string, stances: Readonly<Record<string, unknown>>): string[] {
  const used = new Set(chainMiddlewareNames(appSource));
  const problems: string[] = [];
  for (const name of used) {
    if (!(name in stances)) problems.push(`api/app.ts uses ${name}, which api/reads/direct-get-mirrors.ts does not name`);
  }
  for (const name of Object.keys(stances)) {
    if (!used.has(name)) problems.push(`api/reads/direct-get-mirrors.ts names ${name}, which api/app.ts no longer uses`);
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = readFileSync(new URL('../api/app.ts', import.meta.url), 'utf8');
  const problems = directPathProblems(source, DIRECT_GET_STANCES);
  for (const problem of problems)
    console.error(`direct-path-guard: ${problem}; say in direct-get-mirrors.ts what the direct GET does about it (decision 0078)`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
