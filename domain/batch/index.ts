export { BatchPlanner, planBatch } from './plan.ts';
export { BatchSurvey,   } from './survey.ts';
export { addPreferredNameWarnings, NAME_KEY_SEPARATOR, nameEntryOf, PreferredNameCheck, stagedNameWarnings, type NameEntry, preferredNameKeys, type NameHolders,  } from './preferred-names.ts';
export { computeForceKey, forceKeyMatches } from './force-key.ts';
export { batchLookups, createBatchWorld, createGroupedWorld,  type LoadedWorld } from './lookups.ts';
export {   STATE_TRANSITIONS } from './state-rules.ts';
export type { BatchPlan,  EntitySummary, PlanEnv, PlannedChanges, PlannedRecord,  } from './types.ts';
