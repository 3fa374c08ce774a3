// What the validator needs of each XML dialect beyond its names (which are
// in domain/xml/vocabulary*.ts, with the one namespace table): the schema
// file and the roots it treats specially.

import type { XmlVersion } from '../../domain/model.ts';
import { V1 } from '../../domain/xml/vocabulary-v1.ts';
import { V2 } from '../../domain/xml/vocabulary-v2.ts';

export { versionOfNamespace } from '../../domain/xml/vocabulary.ts';

export type SchemaVersion = XmlVersion;

export interface VersionInfo {
  version: SchemaVersion;
  namespace: string;
  schemaFile: URL;
  /** Root of a change batch. */
  batchRoot: string;
  /** Attribute of the batch header that carries the batch UUID. */
  batchIdAttribute: string;
  /**
   * Roots whose children are a long list that may be validated in slices,
   * mapped to the header element that every slice must repeat (null: none).
   */
  sliceableRoots: ReadonlyMap<string, string | null>;
  /** Attribute that carries xs:ID values in a batch (localId / lid). */
  idAttribute: string;
}

const schemaUrl = (file: string): URL => new URL(`../../schemas/${file}`, import.meta.url);

export const VERSIONS: Readonly<Record<SchemaVersion, VersionInfo>> = {
  v2: {
    version: 'v2',
    namespace: V2.namespace,
    schemaFile: schemaUrl('entity-records-2025.xsd'),
    batchRoot: V2.root.batch,
    batchIdAttribute: V2.batch.batchUuid,
    sliceableRoots: new Map([
      ['batchUpdate', 'info'],
      ['entities', null],
      ['entityRecordRevisions', null],
      ['updates', null],
    ]),
    idAttribute: 'localId',
  },
  v1: {
    version: 'v1',
    namespace: V1.namespace,
    schemaFile: schemaUrl('entity-records-2019.xsd'),
    batchRoot: V1.root.batch,
    batchIdAttribute: V1.batch.batchUuid,
    sliceableRoots: new Map([
      ['bu', 'inf'],
      ['ents', null],
      ['errs', null],
      ['ups', null],
    ]),
    idAttribute: 'lid',
  },
};
