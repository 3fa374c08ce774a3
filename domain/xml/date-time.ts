// Date-times leave the service in one form: whole seconds in UTC with an
// offset (2026-11-23T16:03:02Z), which every xs:dateTime reader takes and the
// real clients expect. Any xs:dateTime is accepted on input and stored as sent.

const XS_DATE_TIME = /^(-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/** Already UTC (as the service stores the times it takes): only a fraction to cut, no parsing. */
const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A stored xs:dateTime (or ISO 8601) value as whole seconds in UTC; undefined stays undefined. */
export function xmlDateTime(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (UTC.test(value)) return value.length === 20 ? value : `${value.slice(0, 19)}Z`;
  const match = XS_DATE_TIME.exec(value);
  // A value without an offset is a local time of unknown zone: taken as UTC rather than the server's zone.
  const millis = Date.parse(match ? `${match[1]}${match[3] ?? 'Z'}` : value);
  if (Number.isNaN(millis)) return value;
  return new Date(millis).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
