// The change feed's pages as the plain definition gives them, for tests to
// hold the service's pages to: every record changed by the transactions
// committed in (from, to], once, with its latest revision there, ordered by
// entity id, the page's rows cut by OFFSET from the whole sorted range.
import type { Harness } from './harness.ts';

export interface ReferencePointer {
  entityId: number;
  rev: string;
  metadataRev: string;
}

/** Page `page` (from 1) of `pageSize` of the range between two transactions given by UUID. */
export async function referencePage(
  harness: Harness,
  fromUuid: string,
  toUuid: string,
  page: number,
  pageSize: number,
): Promise<ReferencePointer[]> {
  const rows = await harness.sql<{ entity_id: string; rev: string; metadata_rev: string }>(
    `select distinct on (r.entity_id) r.entity_id, r.rev, r.metadata_rev
       from transaction t join revision r on r.seq = t.seq
      where t.commit_seq > (select commit_seq from transaction where uuid = $1)
        and t.commit_seq <= (select commit_seq from transaction where uuid = $2)
      order by r.entity_id, r.seq desc
      offset $3 limit $4`,
    [fromUuid, toUuid, (page - 1) * pageSize, pageSize],
  );
  return rows.map((row) => ({ entityId: Number(row.entity_id), rev: row.rev, metadataRev: row.metadata_rev }));
}

/** The revInfo (v2) or ri (v1) elements of a feed document, in document order. */
export function listedPointers(xml: string): ReferencePointer[] {
  return [...xml.matchAll(/<(?:revInfo|ri) ([^>]*)\/>/g)].map(([, attributes]) => {
    const attribute = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attributes!)?.[1];
    return {
      entityId: Number(attribute('entityId') ?? attribute('eid')),
      rev: attribute('rev')!,
      metadataRev: attribute('metadataRev') ?? '',
    };
  });
}

/** The text of the first element `name` of a document. */
export function elementText(xml: string, name: string): string {
  const found = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!found) throw new Error(`no <${name}> in ${xml.slice(0, 300)}`);
  return found[1]!;
}
