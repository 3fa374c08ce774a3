export { BatchPlanner, planBatch } from './plan.ts';
export { BatchSurvey, surveyBatch, type SurveyedDeclaration } from './survey.ts';
export { addPreferredNameWarnings, NAME_KEY_SEPARATOR, nameEntryOf, PreferredNameCheck, stagedNameWarnings, type NameEntry, preferredNameKeys, type NameHolders, type PreferredNameKey } from './preferred-names.ts';
export { computeForceKey, forceKeyMatches } from './force-key.ts';
export { batchLookups, createBatchWorld, createGroupedWorld, type BatchLookups, type LoadedWorld } from './lookups.ts';
export { INACTIVE_STATES, isActive, STATE_TRANSITIONS } from './state-rules.ts';
export type { BatchPlan, BatchWorld, EntitySummary, PlanEnv, PlannedChanges, PlannedRecord, ResolvedRef } from './types.ts';
