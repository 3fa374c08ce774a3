// The metadata formats records are disseminated in (metadataPrefix): one
// entry each. A format added here is offered by ListMetadataFormats, accepted
// in requests and tokens, and needs its rendering in services/reads/oai.ts.

import { EAC_CPF } from '../eac-cpf/writer.ts';
import { OAI_DC } from './dublin-core.ts';

export interface MetadataFormatSpec {
  metadataPrefix: string;
  metadataNamespace: string;
  /** The schema's URL; `schemasUrl` is where the service serves its own XSDs (/docs/schemas/). */
  schema(schemasUrl: string): string;
}

export const METADATA_FORMATS = [
  { metadataPrefix: 'oai_dc', metadataNamespace: OAI_DC.namespace, schema: () => OAI_DC.schema },
  {
    metadataPrefix: 'cam-2025',
    metadataNamespace: 'http://cam.tacr.cz/2025',
    schema: (schemasUrl: string) => `${schemasUrl}entity-records-2025.xsd`,
  },
  { metadataPrefix: 'eac-cpf', metadataNamespace: EAC_CPF.namespace, schema: () => EAC_CPF.schema },
] as const satisfies readonly MetadataFormatSpec[];

export type MetadataPrefix = (typeof METADATA_FORMATS)[number]['metadataPrefix'];

export const METADATA_PREFIXES: readonly MetadataPrefix[] = METADATA_FORMATS.map((format) => format.metadataPrefix);

export function metadataPrefixOf(value: string): MetadataPrefix | undefined {
  return (METADATA_PREFIXES as readonly string[]).includes(value) ? (value as MetadataPrefix) : undefined;
}
