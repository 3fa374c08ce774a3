// Typed domain errors. Every layer matches them by class or code, never by
// message; the API maps `code` to an HTTP status in one place.

export interface XmlProblem {
  line: number;
  column: number;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly code: string;
}

/** The document is not well-formed XML, or uses a forbidden construct (DTD, entities). */
export class InvalidXmlError extends DomainError {
  readonly code = 'InvalidXml';
  readonly problems: XmlProblem[];
  constructor(problems: XmlProblem[]) {
    super(problems[0]?.message ?? 'invalid XML');
    this.problems = problems;
  }
}

/** The document is well-formed but does not match the XSD. */
export class SchemaViolationError extends DomainError {
  readonly code = 'SchemaViolation';
  readonly problems: XmlProblem[];
  constructor(problems: XmlProblem[]) {
    super(`${problems.length} schema violation(s)`);
    this.problems = problems;
  }
}
