import { endOfCommit, type ActivityStreamRepository } from '../../db/activity-stream.ts';
import { collectionPage, entryPoint, type StreamUrls } from '../../domain/activity-streams/documents.ts';
import { isStreamStart, STREAM_START, type StreamPosition } from '../../domain/activity-streams/position.ts';

// The change feed as an Activity Streams collection (LD4 EMM 1.0, "immutable
// forward"): pages of ACTIVITY_STREAM_PAGE_SIZE activities in commit order,
// each named by the position it starts after. Following `next` from the first
// page reaches the pages that start at every page-size-th activity; a full
// page never changes, the page at the end fills as commits land.

const SUMMARY = 'Entity Records Service: every change to every record, in commit order';

export interface ServedDocument {
  body: Record<string, unknown>;
  /** Identifies the content: the same tag is the same document. */
  etag: string;
  /** A full page: its content never changes. */
  immutable: boolean;
}

/** GET /activity-stream: the count of every activity and the page holding the newest. */
export async function activityStreamEntryPoint(
  feed: ActivityStreamRepository,
  urls: StreamUrls,
  pageSize: number,
): Promise<ServedDocument> {
  // totalItems is the database's running count (transaction.revisions_through): every API process answers the same.
  const { upToCommitSeq: upTo, total } = await feed.committedTotal();
  const lastStarts = total === 0 ? 0 : Math.floor((total - 1) / pageSize) * pageSize;
  // The newest activity is the first counting back; the one the last page starts after is total - lastStarts + 1 back.
  const lastPageAfter =
    lastStarts === 0 ? STREAM_START : ((await feed.positionBack(endOfCommit(upTo), total - lastStarts + 1)) ?? STREAM_START);
  return {
    body: entryPoint(urls, { totalItems: total, lastPageAfter }, SUMMARY),
    etag: `as-${upTo}-${total}`,
    immutable: false,
  };
}

/** GET /activity-stream/page/{after}: the activities after a position. */
export async function activityStreamPage(
  feed: ActivityStreamRepository,
  urls: StreamUrls,
  pageSize: number,
  after: StreamPosition,
): Promise<ServedDocument> {
  const [activities, prevAfter] = await Promise.all([
    feed.activitiesAfter(after, pageSize),
    isStreamStart(after) ? undefined : feed.positionBack(after, pageSize + 1).then((found) => found ?? STREAM_START),
  ]);
  const closed = activities.length === pageSize;
  const last = activities.at(-1)?.position;
  return {
    body: collectionPage(urls, { after, activities, prevAfter, closed }),
    etag: `asp-${after.commitSeq}-${after.entityId}-${activities.length}${last ? `-${last.commitSeq}-${last.entityId}` : ''}`,
    immutable: closed,
  };
}
