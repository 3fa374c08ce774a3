// A client following the v2 change feed as the real registry client does:
// GET /updates/from/{mark}; when the answer lists no records (too many), page
// through GET /updates?fromTransId=mark&toTransId=to; then keep info/to as the
// new mark. What it has seen is each record's latest metadataRev (which
// changes with every revision, content or metadata).

import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';

/** GETs a path of the v2 API (from /api/v2 on) and returns the body; throws on any status but 200. */
export type FeedGet = (path: string) => Promise<string>;

const PAGE_SIZE = 50_000;

export class FeedFollower {
  /** entityId → the latest metadataRev the follower has seen for it. */
  readonly seen = new Map<number, string>();
  mark: string;
  syncs = 0;
  readonly #get: FeedGet;

  constructor(get: FeedGet, mark = GENESIS_TRANSACTION_ID) {
    this.#get = get;
    this.mark = mark;
  }

  /** One sync: everything after the mark, then the mark moves to the answer's `to`. */
  async sync(): Promise<void> {
    const from = await this.#get(`/updates/from/${this.mark}`);
    const to = element(from, 'to');
    if (from.includes('<updates>') || from.includes('<updates/>')) {
      this.#take(from);
    } else {
      for (let page = 1; ; page += 1) {
        const listed = this.#take(await this.#get(`/updates?fromTransId=${this.mark}&toTransId=${to}&page=${page}&pageSize=${PAGE_SIZE}`));
        if (listed < PAGE_SIZE) break;
      }
    }
    this.mark = to;
    this.syncs += 1;
  }

  /** Records the revInfo elements of a document; returns how many it held. */
  #take(xml: string): number {
    let listed = 0;
    for (const [, attributes] of xml.matchAll(/<revInfo ([^>]*)\/>/g)) {
      const entityId = Number(/\bentityId="(\d+)"/.exec(attributes!)![1]);
      this.seen.set(entityId, /\bmetadataRev="([^"]+)"/.exec(attributes!)![1]!);
      listed += 1;
    }
    return listed;
  }
}

function element(xml: string, name: string): string {
  const found = new RegExp(`<${name}>([^<]+)</${name}>`).exec(xml);
  if (!found) throw new Error(`no <${name}> in ${xml.slice(0, 300)}`);
  return found[1]!;
}
