// Reading the recorded histories (test/histories/<tag>/<scenario>.json, written by record.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import proto from '@temporalio/proto';

const HISTORIES_DIR = new URL('.', import.meta.url).pathname;

export interface RecordedHistory extends HistoryAndWorkflowId {
  /** `<tag>/<scenario>`, also its workflow id in the replay. */
  file: string;
}

/** Every recorded history, oldest tag first. */
export function recordedHistories(): RecordedHistory[] {
  const tags = readdirSync(HISTORIES_DIR)
    .filter((name) => statSync(join(HISTORIES_DIR, name)).isDirectory() && name !== 'negative-control')
    .sort();
  return tags.flatMap((tag) =>
    readdirSync(join(HISTORIES_DIR, tag))
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => {
        const file = `${tag}/${name.replace(/\.json$/, '')}`;
        const history = proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(join(HISTORIES_DIR, tag, name), 'utf8')));
        return { file, workflowId: file, history };
      }),
  );
}

/** The workflow type a history starts, e.g. batchWorkflow. */
export function workflowTypeOf(history: RecordedHistory): string {
  return (history.history as proto.temporal.api.history.v1.IHistory).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
}
