// Batch documents (batchUpdate / bu), for tests, benchmarks and the CLI. Each
// UpdateEntityCommand becomes one updateEntity holding all of its changes.

import type { BatchEntityRef, BatchHeader, ChangeCommand, UserInfo, XmlVersion } from '../model.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V1_ONLY } from './vocabulary-v1.ts';
import { V2_META } from './vocabulary-v2.ts';
import { isExpressible, writeChange } from './write-changes.ts';
import { revisionRefAttributes, writeParts } from './write-items.ts';
import { writeUser } from './write-metadata.ts';

/**
 * A whole batch document. In v1, metadata changes are left out, and so is an
 * update left with no change (a later `lid` reference to it then dangles).
 */
export function serializeBatch(header: BatchHeader, commands: Iterable<ChangeCommand>, version: XmlVersion): string {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  writeBatchStart(out, header, vocab);
  for (const command of commands) writeCommand(out, command, vocab);
  return out.close(vocab.root.batch).take();
}

/** The same document in chunks, for batches too large to hold as one string. */
export async function* writeBatch(
  header: BatchHeader,
  commands: AsyncIterable<ChangeCommand> | Iterable<ChangeCommand>,
  version: XmlVersion,
): AsyncGenerator<string> {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  writeBatchStart(out, header, vocab);
  for await (const command of commands) {
    writeCommand(out, command, vocab);
    if (out.length >= CHUNK_CHARACTERS) yield out.take();
  }
  yield out.close(vocab.root.batch).take();
}

const CHUNK_CHARACTERS = 64 * 1024;

function writeBatchStart(out: Markup, header: BatchHeader, vocab: Vocabulary): void {
  const names = vocab.batch;
  out.openDocument(vocab.root.batch, vocab);
  out.open(names.info, [[names.batchUuid, header.batchUuid]]);
  if (vocab.version === 'v2') writeUser(out, V2_META.sender, header.sender);
  else writeV1Sender(out, header.sender);
  out.close(names.info);
}

function writeCommand(out: Markup, command: ChangeCommand, vocab: Vocabulary): void {
  const names = vocab.batch;
  if (command.kind === 'create') {
    out.open(names.create, [
      [names.localId, command.localId],
      [names.entityType, command.entityType],
      [names.entityUuid, command.entityUuid],
    ]);
    writeParts(out, command.parts, vocab);
    out.close(names.create);
    return;
  }
  const changes = command.changes.filter((change) => isExpressible(change, vocab.version));
  if (changes.length === 0) return;
  out.open(names.update);
  writeBatchEntityRef(out, command.entity, vocab);
  for (const change of changes) writeChange(out, change, vocab, vocab.updateChange);
  out.close(names.update);
}

function writeBatchEntityRef(out: Markup, entity: BatchEntityRef, vocab: Vocabulary): void {
  const names = vocab.batch;
  if (entity.kind === 'local') {
    out.leaf(names.localEntity, entity.localId);
    return;
  }
  out.empty(names.storedEntity, revisionRefAttributes(entity, names, vocab));
}

/**
 * v1 has one value for the sender: the person entity (usid) when the user is
 * known only by it (as a v1 usid reads in), else the name (usr).
 */
function writeV1Sender(out: Markup, sender: UserInfo): void {
  if (sender.entityId !== undefined && sender.name === String(sender.entityId)) out.leaf(V1_ONLY.userEntity, sender.entityId);
  else out.leaf(V1_ONLY.userName, sender.name);
}
