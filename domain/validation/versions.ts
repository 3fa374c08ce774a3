// The two XML dialects: namespace, schema file and the roots that the
// validator treats specially.

export type SchemaVersion = 'v2' | 'v1';

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
    namespace: 'http://cam.tacr.cz/2025',
    schemaFile: schemaUrl('entity-records-2025.xsd'),
    batchRoot: 'batchUpdate',
    batchIdAttribute: 'uuid',
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
    namespace: 'http://cam.tacr.cz/2019',
    schemaFile: schemaUrl('entity-records-2019.xsd'),
    batchRoot: 'bu',
    batchIdAttribute: 'bid',
    sliceableRoots: new Map([
      ['bu', 'inf'],
      ['ents', null],
      ['errs', null],
      ['ups', null],
    ]),
    idAttribute: 'lid',
  },
};

export function versionOfNamespace(namespace: string | undefined): SchemaVersion | undefined {
  if (namespace === VERSIONS.v2.namespace) return 'v2';
  if (namespace === VERSIONS.v1.namespace) return 'v1';
  return undefined;
}
