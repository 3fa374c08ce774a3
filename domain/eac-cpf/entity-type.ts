// EAC-CPF knows three kinds of entity; the registry's types are open codes
// (PERSON, PARTY_GROUP, GEO, EVENT, …). Persons and families are told by
// their code; everything else is written as a corporate body, as library
// authority practice treats meetings, events and jurisdictions as corporate
// names (docs/decisions/0201). The code itself is always kept beside it
// (otherEntityType), so nothing of the type is lost.

export type EacEntityType = 'person' | 'corporateBody' | 'family';

const PERSON = /^PERSON(_|$)/;
const FAMILY = /^(FAMILY|DYNASTY)(_|$)/;

export function eacEntityType(code: string): EacEntityType {
  if (PERSON.test(code)) return 'person';
  if (FAMILY.test(code)) return 'family';
  return 'corporateBody';
}
