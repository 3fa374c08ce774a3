// Custom search attributes of batch and export workflows, so an operator can
// find them in the Temporal UI (List filter `Submitter = "alice"`,
// `Outcome = "FAILED"`). Plain constants: workflow code imports this module.
// The API registers them on its namespace at start (temporal/client/register.ts).

/** The SDK's search attribute key, spelled out: workflow code may import nothing but the workflow package. */
interface KeywordAttribute {
  name: string;
  type: 'KEYWORD';
}

export const SEARCH_ATTRIBUTES = {
  /** The authenticated principal that submitted the batch or requested the export. */
  submitter: { name: 'Submitter', type: 'KEYWORD' } satisfies KeywordAttribute,
  /** `v1` or `v2` for batches; `snapshot` or `revisions` for exports. */
  kind: { name: 'RequestKind', type: 'KEYWORD' } satisfies KeywordAttribute,
  /**
   * What the request came to, set by the workflow when it knows: COMPLETED or
   * FAILED (a batch stopped by its rules completes its workflow, so Temporal's
   * own status cannot tell), later EXPIRED for exports.
   */
  outcome: { name: 'Outcome', type: 'KEYWORD' } satisfies KeywordAttribute,
} as const;
