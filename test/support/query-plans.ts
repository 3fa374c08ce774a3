// The plans of the SQL the service issues: every statement a pg client of
// this process sends while a capture is on (the app's and the worker's,
// cursors and COPY TO included), EXPLAINed afterwards with the same
// parameters and the planner settings its transaction had made (a
// set_config(..., true) of the same client since its BEGIN), and the plan
// nodes that read a large table whole.
import pg from 'pg';

export interface CapturedQuery {
  text: string;
  values: unknown[];
  /** The transaction-local settings (set_config statements) the client had made before this statement. */
  settings: { text: string; values: unknown[] }[];
}

/** Statements that end a transaction's local settings, and those that make one. */
const TRANSACTION_EDGE = /^\s*(begin|start\s+transaction|commit|rollback|end)\b/i;
const LOCAL_SETTING = /\bset_config\s*\(|^\s*set\s+local\b/i;

interface Submittable {
  text?: string;
  values?: unknown[];
}

/** Records the statements every pg client of this process sends until stop(). */
export function captureQueries(): { queries: CapturedQuery[]; stop(): void } {
  const queries: CapturedQuery[] = [];
  const settings = new WeakMap<pg.Client, CapturedQuery['settings']>();
  const original = pg.Client.prototype.query;
  const recording = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    let sent: { text: string; values: unknown[] } | undefined;
    if (typeof first === 'string') sent = { text: first, values: Array.isArray(second) ? second : [] };
    else if (first !== null && typeof first === 'object' && typeof (first as Submittable).text === 'string') {
      const submittable = first as Submittable;
      sent = { text: submittable.text!, values: submittable.values ?? (Array.isArray(second) ? second : []) };
    }
    if (sent !== undefined) {
      const made = settings.get(this) ?? [];
      queries.push({ ...sent, settings: [...made] });
      if (TRANSACTION_EDGE.test(sent.text)) settings.set(this, []);
      else if (LOCAL_SETTING.test(sent.text)) settings.set(this, [...made, sent]);
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  pg.Client.prototype.query = recording as typeof original;
  return {
    queries,
    stop() {
      pg.Client.prototype.query = original;
    },
  };
}

/** The read of a statement, when it is one: a SELECT or WITH as sent, or the query of a `copy (…) to stdout`. */
export function readStatement(text: string): string | undefined {
  const trimmed = text.trim();
  const copy = /^copy\s*\(([\s\S]*)\)\s*to\s+stdout/i.exec(trimmed);
  if (copy) return copy[1];
  if (!/^(select|with)\b/i.test(trimmed)) return undefined;
  // Statements that write (a WITH … INSERT, a SELECT … FOR UPDATE) are not the reads this looks at.
  if (/\b(insert|update|delete)\b\s+(into|from|\w+\s+set)|\bfor\s+(update|share)\b/i.test(trimmed)) return undefined;
  return trimmed;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Sort Key'?: string[];
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** A plan node that reads a large table whole: a sequential scan of it, or a sort of such a whole read that no limit bounds. */
export interface PlanProblem {
  node: string;
  relations: string[];
}

/** Scans of a large table below `node` that read it whole: sequential, or an index walked without a condition. Not below a limit: what a limit holds back is bounded by it. */
function wholeScansBelow(node: PlanNode, large: ReadonlySet<string>): string[] {
  if (node['Node Type'] === 'Limit') return [];
  const whole =
    node['Relation Name'] !== undefined &&
    large.has(node['Relation Name']) &&
    (node['Node Type'] === 'Seq Scan' || (/Index (Only )?Scan/.test(node['Node Type']) && node['Index Cond'] === undefined));
  return [...(whole ? [node['Relation Name']!] : []), ...(node.Plans ?? []).flatMap((child) => wholeScansBelow(child, large))];
}

function problemsOf(node: PlanNode, large: ReadonlySet<string>): PlanProblem[] {
  const found: PlanProblem[] = [];
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] && large.has(node['Relation Name']))
    found.push({ node: 'Seq Scan', relations: [node['Relation Name']] });
  if (node['Node Type'] === 'Sort' || node['Node Type'] === 'Incremental Sort') {
    const relations = wholeScansBelow(node, large);
    if (relations.length > 0) found.push({ node: `${node['Node Type']} (${(node['Sort Key'] ?? []).join(', ')})`, relations });
  }
  for (const child of node.Plans ?? []) found.push(...problemsOf(child, large));
  return found;
}

/** The plan of `query` (EXPLAIN, not run) and what in it reads a table of `large` whole. */
export async function planProblems(
  client: pg.ClientBase,
  query: CapturedQuery,
  large: ReadonlySet<string>,
): Promise<{ plan: string; problems: PlanProblem[] }> {
  const statement = readStatement(query.text);
  if (statement === undefined || LOCAL_SETTING.test(query.text)) return { plan: '', problems: [] };
  await client.query('begin');
  try {
    for (const setting of query.settings) await client.query(setting.text, setting.values);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) ${statement}`, query.values);
    const root = rows[0]!['QUERY PLAN'][0].Plan;
    const text = await client.query<{ 'QUERY PLAN': string }>(`explain ${statement}`, query.values);
    return { plan: text.rows.map((row) => row['QUERY PLAN']).join('\n'), problems: problemsOf(root, large) };
  } finally {
    await client.query('rollback');
  }
}
