// The pipeline (domain/batch/pipeline.ts): every rule in its phase, and the
// planner running the drained phase in the pipeline's order, with the
// judgements that wait for the end of the batch.

import { describe, expect, it } from 'vitest';
import { BATCH_PIPELINE, NAME_HOLDER_STATES } from '../../domain/batch/index.ts';
import { planBatch, planCommandByCommand } from '../support/batch-planning.ts';
import { allIssues, bodyPart, create, relTo, testEnv, updateLocal, world } from './batch-fixtures.ts';

describe('BATCH_PIPELINE', () => {
  it('lists the drained rules with their severities, and the end rule with the states that hold a name', () => {
    expect(BATCH_PIPELINE.drained.map((rule) => [rule.name, rule.severity])).toEqual([
      ['MissingNamePart', 'ERROR'],
      ['ReferenceToInactiveEntity', 'WARNING'],
    ]);
    expect(BATCH_PIPELINE.end.name).toBe('PreferredNameExists');
    expect(BATCH_PIPELINE.end.holderStates).toBe(NAME_HOLDER_STATES);
  });

  it('has the planner run the drained rules in its order, over the records of a drain', () => {
    const plan = planBatch(
      [
        create('target', [bodyPart('b1', 'no name yet')]),
        create('pointer', [bodyPart('b2', 'no name either'), relTo('target')]),
        updateLocal('target', [{ op: 'setState', state: 'ERS_INVALID' }]),
      ],
      world(),
      testEnv(),
    );
    // Both drain together: the name parts of both are judged, then the reference, on the state target ends in.
    expect(allIssues(plan).map((issue) => [issue.localId, issue.issueCode, issue.severity])).toEqual([
      ['target', 'MissingNamePart', 'ERROR'],
      ['pointer', 'MissingNamePart', 'ERROR'],
      ['pointer', 'ReferenceToInactiveEntity', 'WARNING'],
    ]);
  });

  it('leaves a judgement for the end of the batch while a later command may change its target', () => {
    const commands = [
      create('target', [bodyPart('b1', 'no name yet')]),
      create('pointer', [bodyPart('b2', 'no name either'), relTo('target')]),
      updateLocal('target', [{ op: 'setState', state: 'ERS_INVALID' }]),
    ];
    const plan = planCommandByCommand(commands, world(), testEnv());
    // pointer drains before target's last command: its reference is judged at the end, on the ERS_INVALID target ends in.
    expect(allIssues(plan).map((issue) => [issue.localId, issue.issueCode])).toEqual([
      ['pointer', 'MissingNamePart'],
      ['pointer', 'ReferenceToInactiveEntity'],
      ['target', 'MissingNamePart'],
    ]);
    expect(plan.records.map((record) => record.localId)).toEqual(['pointer', 'target']);
  });
});
