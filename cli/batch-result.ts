// What a person needs from a v2 batch result document (batchChangeSuccess or
// batchChangeFailure), read from the markup the service writes.

export interface ResultSummary {
  failed: boolean;
  text: string;
  /** Present on a failure that holds only warnings: the key that writes the same batch anyway. */
  forceKey?: string;
}

export function summarizeResult(xml: string): ResultSummary {
  if (/<batchChangeFailure[\s>/]/.test(xml)) {
    const errors = count(xml, /<severity>ERROR<\/severity>/g);
    const warnings = count(xml, /<severity>WARNING<\/severity>/g);
    const forceKey = /<forceKey>([^<]+)<\/forceKey>/.exec(xml)?.[1];
    return { failed: true, text: `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`, ...(forceKey ? { forceKey } : {}) };
  }
  const transaction = /<batchChangeSuccess[^>]*\stransaction="([^"]+)"/.exec(xml)?.[1];
  const revisions = count(xml, /<revision[\s/]/g);
  return { failed: false, text: `${plural(revisions, 'revision')} written${transaction ? ` in transaction ${transaction}` : ''}` };
}

function count(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
