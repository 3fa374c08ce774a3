// A whole batch planned at once, over an in-memory world: what the domain
// tests of the batch rules plan with. The apply plans the same batch group by
// group through the same planner (services/batches/apply.ts).

import type { ChangeCommand } from '../../domain/model.ts';
import type { BatchPlan, BatchWorld, PlanEnv } from '../../domain/batch/types.ts';
import { BatchPlanner, createGroupedWorld, surveyBatch, type LoadedWorld } from '../../engine/batch/index.ts';
import type { BatchLookups } from '../../engine/batch/survey.ts';

/** The whole batch at once: its records in first-touch order and every issue. */
export function planBatch(commands: readonly ChangeCommand[], world: BatchWorld, env: PlanEnv): BatchPlan {
  const planner = new BatchPlanner(world, env);
  planner.declare(surveyBatch(commands));
  planner.plan(commands);
  return planner.finish();
}

/** The batch planned a command at a time, drained after each, as the apply plans a large batch group by group. */
export function planCommandByCommand(commands: readonly ChangeCommand[], world: BatchWorld, env: PlanEnv): BatchPlan {
  const planner = new BatchPlanner(world, env);
  planner.declare(surveyBatch(commands));
  const drained = commands.flatMap((command) => {
    planner.plan([command]);
    return planner.drain();
  });
  const plan = planner.finish();
  return { ...plan, records: [...drained, ...plan.records] };
}

/** What the caller must load before planning these commands. */
export function batchLookups(commands: readonly ChangeCommand[]): BatchLookups {
  return surveyBatch(commands).lookups();
}

/** Looks up by entityId when the ref has one, else by entityUuid; the planner checks that both agree. */
export function createBatchWorld(loaded: LoadedWorld): BatchWorld {
  const world = createGroupedWorld(loaded);
  world.setRecords(loaded.records ?? []);
  return world;
}
