import { describe, expect, it } from 'vitest';
import { computeForceKey, forceKeyMatches } from '../../domain/batch/index.ts';
import { planBatch } from '../support/batch-planning.ts';
import type { EntityIssues, Part } from '../../domain/model.ts';
import { create, namePart, summary, testEnv, world } from './batch-fixtures.ts';

const SECRET = 'test-secret';
const BODY = 'a'.repeat(64);

const warning = (localId: string, message: string, uuid = 'u-1'): EntityIssues => ({
  localId,
  issues: [{ uuid, severity: 'WARNING', issueCode: 'PreferredNameExists', message, entityRef: { entityId: 17 } }],
});

describe('force key', () => {
  it('is stable for the same body and warnings, whatever their issue uuids or order', () => {
    const key = computeForceKey(SECRET, BODY, [warning('a', 'm1', 'u-1'), warning('b', 'm2', 'u-2')]);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(computeForceKey(SECRET, BODY, [warning('b', 'm2', 'u-9'), warning('a', 'm1', 'u-8')])).toBe(key);
    expect(forceKeyMatches(SECRET, BODY, [warning('a', 'm1', 'x'), warning('b', 'm2', 'y')], key)).toBe(true);
  });

  it('changes with the body, the warnings or the secret', () => {
    const key = computeForceKey(SECRET, BODY, [warning('a', 'm1')]);
    expect(computeForceKey(SECRET, 'b'.repeat(64), [warning('a', 'm1')])).not.toBe(key);
    expect(computeForceKey(SECRET, BODY, [warning('a', 'm2')])).not.toBe(key);
    expect(computeForceKey(SECRET, BODY, [warning('b', 'm1')])).not.toBe(key);
    expect(computeForceKey(SECRET, BODY, [warning('a', 'm1'), warning('c', 'm3')])).not.toBe(key);
    expect(computeForceKey(SECRET, BODY, [])).not.toBe(key);
    expect(computeForceKey('other', BODY, [warning('a', 'm1')])).not.toBe(key);
    expect(forceKeyMatches(SECRET, BODY, [warning('a', 'm2')], key)).toBe(false);
    expect(forceKeyMatches(SECRET, BODY, [warning('a', 'm1')], 'short')).toBe(false);
  });

  it('matches the warnings of a re-planned batch despite per-attempt ids', () => {
    const rel: Part = {
      partUuid: '',
      type: 'PT_REL',
      items: [{ kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityId: 7 } } }],
    };
    const commands = [create('n', [namePart('p', 'A'), rel])];
    const first = planBatch(commands, world({ entities: [summary(7, 'ERS_INVALID')] }), testEnv());
    let n = 500;
    const otherIds = {
      ...testEnv(),
      newUuid: () => `ffffffff-0000-4000-8000-${String(++n).padStart(12, '0')}`,
      allocateEntityId: () => 9000,
    };
    const second = planBatch(commands, world({ entities: [summary(7, 'ERS_INVALID')] }), otherIds);
    expect(first.hasWarnings).toBe(true);
    const key = computeForceKey(SECRET, BODY, first.issues);
    expect(forceKeyMatches(SECRET, BODY, second.issues, key)).toBe(true);
  });
});
