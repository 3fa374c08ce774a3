// The batch rules: plain functions over one entity's change and what it needs to know.
export { BATCH_PIPELINE } from './pipeline.ts';
export { NAME_HOLDER_STATES, NAME_KEY_SEPARATOR, type NameEntry } from './preferred-names.ts';
export { computeForceKey, forceKeyMatches } from './force-key.ts';
export { STATE_TRANSITIONS } from './state-rules.ts';
export type { BatchPlan, EntitySummary, PlanEnv, PlannedChanges, PlannedRecord } from './types.ts';
