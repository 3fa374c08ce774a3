// What a person needs from a v2 batch result document (batchChangeSuccess or
// batchChangeFailure), read from the markup the service writes.

export type ResultSummary =
  | { failed: false; revisions: number; transaction?: string }
  | {
      failed: true;
      errors: number;
      warnings: number;
      /** Present on a failure that holds only warnings: the key that writes the same batch anyway. */
      forceKey?: string;
    };

export function summarizeResult(xml: string): ResultSummary {
  if (/<batchChangeFailure[\s>/]/.test(xml)) {
    const forceKey = /<forceKey>([^<]+)<\/forceKey>/.exec(xml)?.[1];
    return {
      failed: true,
      errors: count(xml, /<severity>ERROR<\/severity>/g),
      warnings: count(xml, /<severity>WARNING<\/severity>/g),
      ...(forceKey ? { forceKey } : {}),
    };
  }
  const transaction = /<batchChangeSuccess[^>]*\stransaction="([^"]+)"/.exec(xml)?.[1];
  return { failed: false, revisions: count(xml, /<revision[\s/]/g), ...(transaction ? { transaction } : {}) };
}

/**
 * One line about the outcome. A test batch is always rolled back: its
 * success document lists what the batch would write, and its transaction
 * never exists, so the line says so instead of naming it.
 */
export function describeResult(summary: ResultSummary, test: boolean): string {
  if (summary.failed) {
    return `${plural(summary.errors, 'error')}, ${plural(summary.warnings, 'warning')}${test ? '; nothing was written (test batch)' : '; nothing was written'}`;
  }
  if (test) return `it would write ${plural(summary.revisions, 'revision')}; nothing was written (test batch)`;
  return `${plural(summary.revisions, 'revision')} written${summary.transaction ? ` in transaction ${summary.transaction}` : ''}`;
}

function count(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
