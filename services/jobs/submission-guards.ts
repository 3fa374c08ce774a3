import type { ServiceDeps } from '../deps.ts';
import type { SubmissionCount } from '../../db/submission-rate.ts';

// What guards job submissions across every API process, as the HTTP layer
// asks for it: the submission rate per principal, and the signed request a
// replay of which starts nothing (db/replay-guard.ts, claimed with the export
// it starts).

export type { SignedRequest } from '../../db/replay-guard.ts';
export type { SubmissionCount };

/** Counts one submission of `principal` in the window of `windowSeconds` it falls in (the database's clock). */
export function countSubmission(deps: Pick<ServiceDeps, 'db'>, principal: string, windowSeconds: number): Promise<SubmissionCount> {
  return deps.db.submissionRate.count(principal, windowSeconds);
}
