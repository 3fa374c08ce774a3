import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DIRECT_GET_STANCES } from '../../api/reads/direct-get-mirrors.ts';
import { chainMiddlewareNames, directPathProblems } from '../../tools/direct-path-guard.ts';

const appSource = readFileSync(new URL('../../api/app.ts', import.meta.url), 'utf8');

describe('the direct GET guard (decision 0078)', () => {
  it('finds every middleware of the real chain named in direct-get-mirrors.ts', () => {
    expect(chainMiddlewareNames(appSource)).toContain('authenticate');
    expect(directPathProblems(appSource, DIRECT_GET_STANCES)).toEqual([]);
  });

  it('fails when a middleware is added to the chain without a stance', () => {
    const added = appSource.replace('app.use(authenticate(deps));', 'app.use(authenticate(deps));\n  app.use(auditLog(deps));');
    expect(directPathProblems(added, DIRECT_GET_STANCES)).toEqual([
      'api/app.ts uses auditLog, which api/reads/direct-get-mirrors.ts does not name',
    ]);
  });

  it('fails when a stance outlives its middleware', () => {
    const removed = appSource.replace('app.use(watchSignedWrites(metrics.registry));', '');
    expect(directPathProblems(removed, DIRECT_GET_STANCES)).toEqual([
      'api/reads/direct-get-mirrors.ts names watchSignedWrites, which api/app.ts no longer uses',
    ]);
  });
});
