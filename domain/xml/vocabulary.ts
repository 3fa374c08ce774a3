// Element and attribute names that both interface versions share in meaning.
// Reader and writer look names up here, so one code path serves v2 and v1;
// constructs only one version has (v2 issues, participants and users, v1
// error messages) are spelled in the code that handles them.

import type { XmlVersion } from '../model.ts';
import type { Vocabulary } from './vocabulary-shape.ts';
import { V1 } from './vocabulary-v1.ts';
import { V2 } from './vocabulary-v2.ts';

export type { SharedChangeOp, Vocabulary } from './vocabulary-shape.ts';

export function vocabularyFor(version: XmlVersion): Vocabulary {
  return version === 'v2' ? V2 : V1;
}

/** The interface version whose namespace this is, if any. */
export function versionOfNamespace(namespace: string | undefined): XmlVersion | undefined {
  if (namespace === V2.namespace) return 'v2';
  if (namespace === V1.namespace) return 'v1';
  return undefined;
}
