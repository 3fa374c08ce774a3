// One page of search results (queryResult / qr).

import type { FoundEntity, QueryResult, XmlVersion } from '../model.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';

export function serializeQueryResult(result: QueryResult, version: XmlVersion): string {
  const vocab = vocabularyFor(version);
  const names = vocab.query;
  const out = new Markup().openDocument(vocab.root.queryResult, vocab);
  out.open(names.header).leaf(names.count, result.count).close(names.header);
  out.open(names.list);
  for (const entity of result.entities) writeFoundEntity(out, entity, vocab);
  out.close(names.list);
  return out.close(vocab.root.queryResult).take();
}

function writeFoundEntity(out: Markup, entity: FoundEntity, vocab: Vocabulary): void {
  const names = vocab.query;
  out.open(names.entity, [
    [names.entityType, entity.entityType],
    [vocab.id.entityId, entity.entityId],
    [vocab.id.entityUuid, entity.entityUuid],
  ]);
  out.leaf(names.name, entity.name).leaf(names.description, entity.description);
  const lookup = entity.lookup;
  if (lookup !== undefined) {
    out.open(names.lookup, [[names.partType, lookup.partType]]).leaf(names.value, lookup.value);
    for (const highlight of lookup.highlights) {
      out.empty(names.highlight, [
        [names.start, highlight.start],
        [names.end, highlight.end],
      ]);
    }
    out.close(names.lookup);
  }
  out.close(names.entity);
}
