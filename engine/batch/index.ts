// The batch engine: a batch of any size planned group by group in constant
// memory. The survey reads what planning any part needs of the whole batch;
// the planner runs the domain's rules over each group; the world answers
// lookups of the stored entities the batch names.
export { BatchPlanner } from './planner.ts';
export { BatchSurvey, refOf, surveyBatch } from './survey.ts';
export { createGroupedWorld, type LoadedWorld } from './grouped-world.ts';
export { scanBatchSurvey, type SurveyScanSummary, type SurveySink } from './survey-scan.ts';
