// Streaming reader of change batches (batchUpdate in v2, bu in v1). Each
// createEntity / updateEntity becomes one ChangeCommand the moment it closes.

import type { BatchHeader, ChangeCommand } from '../model.ts';
import { readXmlStream, xmlError, XmlElementReader, type XmlDocumentHandler, type XmlElement } from './element-stream.ts';
import { readCreate, readHeader, readUpdate } from './read-changes.ts';
import { invalid, newReadContext, unexpected, type ReadContext } from './read-support.ts';
import { versionOfNamespace, vocabularyFor } from './vocabulary.ts';

export interface BatchReadSummary {
  header: BatchHeader;
  /** Number of commands emitted (creates + updates). */
  changes: number;
  creates: number;
  updates: number;
}

/** The sax handler of a batch document: the header first, then one command per change. */
function batchHandler(onCommand: (command: ChangeCommand) => void): { handler: XmlDocumentHandler; summary(): BatchReadSummary } {
  const state: { context?: ReadContext; root?: XmlElement; header?: BatchHeader } = {};
  let creates = 0;
  let updates = 0;
  const handler: XmlDocumentHandler = {
    root(element, namespace) {
      const version = versionOfNamespace(namespace);
      const vocab = version === undefined ? undefined : vocabularyFor(version);
      if (vocab === undefined || element.name !== vocab.root.batch) {
        throw invalid(element, `expected a batch (batchUpdate or bu in its namespace), found {${namespace}}${element.name}`);
      }
      state.context = newReadContext(vocab);
      state.root = element;
    },
    child(element) {
      const { context, root } = state;
      if (context === undefined || root === undefined) return;
      const names = context.vocab.batch;
      if (state.header === undefined) {
        if (element.name !== names.info) throw invalid(element, `${root.name} must start with ${names.info}`);
        state.header = readHeader(element, context);
      } else if (element.name === names.create) {
        const command = readCreate(element, context);
        creates += 1;
        onCommand(command);
      } else if (element.name === names.update) {
        const command = readUpdate(element, context);
        updates += 1;
        onCommand(command);
      } else {
        throw unexpected(element, root);
      }
    },
  };
  const summary = (): BatchReadSummary => {
    const { root, header } = state;
    // readXmlStream guarantees a root; a batch without children has no header.
    if (header === undefined) throw xmlError(root?.line ?? 1, root?.column ?? 1, 'the batch has no info element');
    return { header, changes: creates + updates, creates, updates };
  };
  return { handler, summary };
}

/**
 * Reads a batch document and calls onCommand once per createEntity /
 * updateEntity, in document order. The interface version comes from the root's
 * namespace. Errors thrown by onCommand propagate unchanged and stop reading.
 */
export async function readBatch(
  source: AsyncIterable<Uint8Array | string>,
  onCommand: (command: ChangeCommand) => void,
): Promise<BatchReadSummary> {
  const { handler, summary } = batchHandler(onCommand);
  await readXmlStream(source, handler);
  return summary();
}

/**
 * A batch document fed by the caller in pieces of text, synchronously; each
 * command goes to onCommand as it closes, and the header is known once its
 * element has closed. The document need not be fed to its end.
 */
export function batchPushReader(onCommand: (command: ChangeCommand) => void): {
  write(text: string): void;
  header(): BatchHeader | undefined;
} {
  const { handler, summary } = batchHandler(onCommand);
  const reader = new XmlElementReader(handler);
  let header: BatchHeader | undefined;
  return {
    write: (text) => reader.write(text),
    header: () => (header ??= summary().header),
  };
}

/** Bytes handed to the XML parser at a time, so a group of commands never waits for a whole 4 MB piece of the body. */
const PIECE_BYTES = 64 * 1024;

/**
 * Reads a batch document and hands its commands over in groups of about
 * `groupSize`, in document order, awaiting `onGroup` before reading on: the
 * consumer's pace (a database write, say) holds the reading back, so no more
 * than one group and one piece of the body are read ahead.
 */
export async function readBatchInGroups(
  source: AsyncIterable<Uint8Array | string>,
  groupSize: number,
  onGroup: (commands: ChangeCommand[]) => Promise<void> | void,
): Promise<BatchReadSummary> {
  let group: ChangeCommand[] = [];
  const { handler, summary } = batchHandler((command) => group.push(command));
  async function* pieces(): AsyncGenerator<string | Uint8Array> {
    for await (const chunk of source) {
      const step = typeof chunk === 'string' ? PIECE_BYTES / 2 : PIECE_BYTES;
      for (let start = 0; start < chunk.length; start += step) {
        yield typeof chunk === 'string' ? chunk.slice(start, start + step) : chunk.subarray(start, start + step);
        if (group.length >= groupSize) {
          const full = group;
          group = [];
          await onGroup(full);
        }
      }
    }
  }
  await readXmlStream(pieces(), handler);
  const last = group;
  group = [];
  if (last.length > 0) await onGroup(last);
  return summary();
}
