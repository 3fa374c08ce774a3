import type { BatchIssueCode, EntityIssues, EntityRef, Issue, IssueSeverity, ItemRef, PartRef } from '../model.ts';

/** An issue before it gets its UUID and severity: what the rules produce. */
export interface Problem {
  code: BatchIssueCode;
  message: string;
  partRef?: PartRef;
  itemRef?: ItemRef;
  entityRef?: EntityRef;
}

export function toIssue(problem: Problem, severity: IssueSeverity, newUuid: () => string): Issue {
  const issue: Issue = { uuid: newUuid(), severity, issueCode: problem.code, message: problem.message };
  if (problem.partRef !== undefined) issue.partRef = problem.partRef;
  if (problem.itemRef !== undefined) issue.itemRef = problem.itemRef;
  if (problem.entityRef !== undefined) issue.entityRef = problem.entityRef;
  return issue;
}

/** Collects issues per localId, keeping groups in first-occurrence order. */
export class IssueLog {
  readonly #groups = new Map<string | undefined, Issue[]>();
  #hasErrors = false;

  constructor(initial: readonly EntityIssues[] = []) {
    for (const group of initial) this.add(group.localId, group.issues);
  }

  add(localId: string | undefined, issues: readonly Issue[]): void {
    if (issues.length === 0) return;
    if (!this.#hasErrors && issues.some((issue) => issue.severity === 'ERROR')) this.#hasErrors = true;
    const group = this.#groups.get(localId);
    if (group === undefined) this.#groups.set(localId, [...issues]);
    else group.push(...issues);
  }

  get hasErrors(): boolean {
    return this.#hasErrors;
  }

  groups(): EntityIssues[] {
    return [...this.#groups].map(([localId, issues]) => (localId === undefined ? { issues } : { localId, issues }));
  }
}

export function hasSeverity(groups: readonly EntityIssues[], severity: IssueSeverity): boolean {
  return groups.some((group) => group.issues.some((issue) => issue.severity === severity));
}

export function describeRef(ref: EntityRef): string {
  const parts: string[] = [];
  if (ref.entityId !== undefined) parts.push(`entityId ${ref.entityId}`);
  if (ref.entityUuid !== undefined) parts.push(`entityUuid ${ref.entityUuid}`);
  return parts.length > 0 ? parts.join(' / ') : 'an empty reference';
}

export function partRefOf(type: PartRef['type'], partUuid: string | undefined): PartRef {
  return partUuid === undefined || partUuid === '' ? { type } : { type, partUuid };
}

export function itemRefOf(item: ItemRef): ItemRef {
  const ref: ItemRef = { type: item.type };
  if (item.spec !== undefined) ref.spec = item.spec;
  if (item.uuid !== undefined) ref.uuid = item.uuid;
  return ref;
}
