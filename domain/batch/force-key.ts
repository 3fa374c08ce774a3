// The forceKey handed out with a batch that failed only on warnings. Sending
// it back writes the batch despite those warnings, but only while the body and
// the warnings it would raise are exactly the ones the key was issued for.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EntityIssues, Issue } from '../model.ts';

const KEY_VERSION = 'force-key/1';

/**
 * Issue uuids are random and part/item uuids may be generated per attempt, so
 * they are left out; the planner words messages without per-attempt values.
 * Sorted, so that the order in which rules ran does not matter.
 */
function canonicalWarnings(entities: readonly EntityIssues[]): string[] {
  const lines: string[] = [];
  for (const entity of entities) {
    for (const issue of entity.issues) lines.push(JSON.stringify(canonicalIssue(entity.localId, issue)));
  }
  return lines.sort();
}

function canonicalIssue(localId: string | undefined, issue: Issue): unknown[] {
  return [
    localId ?? null,
    issue.severity,
    issue.issueCode ?? null,
    issue.ruleCode ?? null,
    issue.message,
    issue.entityRef?.entityId ?? null,
    issue.entityRef?.entityUuid ?? null,
    issue.partRef?.type ?? null,
    issue.itemRef?.type ?? null,
    issue.itemRef?.spec ?? null,
  ];
}

/** HMAC-SHA256 (base64url) over the body hash and the warnings, grouped as the failure reports them. */
export function computeForceKey(secret: string, bodySha256: string, warnings: readonly EntityIssues[]): string {
  const payload = JSON.stringify([KEY_VERSION, bodySha256, canonicalWarnings(warnings)]);
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function forceKeyMatches(secret: string, bodySha256: string, warnings: readonly EntityIssues[], key: string): boolean {
  const expected = Buffer.from(computeForceKey(secret, bodySha256, warnings));
  const given = Buffer.from(key);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
