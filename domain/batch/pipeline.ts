// Every batch rule, in the phase it runs in. The planner (engine/batch/planner.ts)
// runs the first two phases as it plans, the apply (services/batches/apply.ts)
// the last; neither names a rule, so a rule is added, moved or dropped here
// and in its own file.
//
// 1. commands, per change: what each command does to its working record, and
//    the errors it raises on the way.
// 2. drained, when a group drains: a record no later command can change,
//    judged with the states the batch leaves other entities in.
// 3. end, at the end of the batch: judged with facts only the database has
//    (who holds each preferred name now).

import type { CreateEntityCommand, EntityRecord, EntityRef, Part, RecordChange } from '../model.ts';
import { applyChange, type ApplyOutcome } from './apply-change.ts';
import { createdRecord, createUuidProblem, duplicateLocalId } from './create-rules.ts';
import { inactiveReferenceRule } from './inactive-reference-rules.ts';
import type { Problem } from './issues.ts';
import { namePartRule } from './name-part-rules.ts';
import { checkNewParts, withUuids } from './parts.ts';
import { preferredNameRule } from './preferred-names.ts';
import { refMatches, resolveChangeTargets, resolvePartTargets, type TargetResolver } from './references.ts';
import { dateAddedIssues, nextRevision, staleRevision } from './revision-rules.ts';
import { undeclaredLocalId, unknownLocalSubject, unknownStoredSubject, unknownTarget } from './subject-rules.ts';
import type { DrainedRule, PlanEnv, ResolvedRef } from './types.ts';

/** What a create may ask of the batch and the store about the UUID it brings. */
interface CreateFacts {
  /** Whether a stored entity holds the UUID. */
  uuidStored(entityUuid: string): boolean;
  /** The localId of an earlier create of the batch with the UUID. */
  earlierCreate(entityUuid: string): string | undefined;
  resolve: TargetResolver;
}

/** Per change: the commands' semantics. Every problem here is an error. */
const commands = {
  /** A localId declared twice. */
  duplicateLocalId,

  /** The record a create makes, with the problems of its UUID, its parts and their references. */
  create(command: CreateEntityCommand, ids: ResolvedRef, facts: CreateFacts, env: PlanEnv) {
    const problems: Problem[] = [];
    if (command.entityUuid !== undefined) {
      const uuid = command.entityUuid;
      const problem = createUuidProblem(uuid, facts.uuidStored(uuid), facts.earlierCreate(uuid));
      if (problem !== undefined) problems.push(problem);
    }
    const parts: Part[] = command.parts.map((part) => {
      const resolved = resolvePartTargets(
        withUuids(part, () => env.newUuid()),
        facts.resolve,
      );
      problems.push(...resolved.problems);
      return resolved.value;
    });
    problems.push(...checkNewParts(parts, []));
    return { record: createdRecord(command, ids, parts, env.now), parts, problems };
  },

  /** An update of a localId no create or stored reference before it declared. */
  unknownLocalSubject,

  /** An update of a stored entity that `found` (looked up by the ref) is not. */
  unknownStoredSubject: (ref: EntityRef, found: EntityRecord | undefined): Problem | undefined =>
    found !== undefined && refMatches(ref, found) ? undefined : unknownStoredSubject(ref),

  /** An update based on another rev than the record's at batch start. */
  staleRevision,

  /** One change: its references resolved, then applied whole or not at all. */
  change(record: EntityRecord, change: RecordChange, resolve: TargetResolver, env: PlanEnv): ApplyOutcome {
    const resolved = resolveChangeTargets(change, resolve);
    return resolved.problems.length > 0 ? { ok: false, problems: resolved.problems } : applyChange(record, resolved.value, env);
  },

  /** Which entity a reference names, and the problems of one that names none. */
  refMatches,
  undeclaredLocalId,
  unknownTarget,

  /** The revision a final record gets, and the rev its added issues are from. */
  revise(record: EntityRecord, before: EntityRecord | undefined, changes: readonly RecordChange[], contentChanged: boolean, env: PlanEnv) {
    record.revision = nextRevision(before?.revision, contentChanged, record.revision.participants, env);
    dateAddedIssues(record, changes);
  },
};

/** When a group drains, in this order. */
const drained: readonly DrainedRule[] = [namePartRule, inactiveReferenceRule];

export const BATCH_PIPELINE = { commands, drained, end: preferredNameRule } as const;
