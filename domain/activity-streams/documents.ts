import { formatPosition, isStreamStart, type StreamPosition } from './position.ts';

// The JSON-LD documents of the change feed as Activity Streams 2.0, in the
// usage of LD4 Entity Metadata Management 1.0: the entry point
// (OrderedCollection) and its pages (OrderedCollectionPage) of activities,
// oldest first. Pure: the caller gives the URLs' base and the rows.

const ACTIVITY_STREAMS_CONTEXT = ['https://www.w3.org/ns/activitystreams', 'https://emm-spec.org/1.0/context.json'] as const;

/** EMM's change types this service emits; `Add` is a record made valid again after a `Delete`. */
export type ChangeType = 'Create' | 'Update' | 'Deprecate' | 'Delete' | 'Add';

/** One record's change in one committed transaction, as the feed holds it. */
export interface ChangeActivity {
  position: StreamPosition;
  /** UUID of the transaction that committed it (the feed's mark, the push stream's event id). */
  transaction: string;
  type: ChangeType;
  entityId: string;
  entityType: string;
  /** Commit time of the transaction: UTC, whole seconds (the OAI-PMH datestamp rule). */
  published: string;
  /** For Deprecate: the record that replaces this one. */
  replacedBy?: { entityId: string; entityType: string };
}

export interface StreamUrls {
  /** The entry point's URL (…/activity-stream). */
  collection: string;
  /** The URL of the record page a record's IRI is (…/global). */
  records: string;
}

interface Link {
  type: string;
  id: string;
}

function pageUrl(urls: StreamUrls, after: StreamPosition): string {
  return `${urls.collection}/page/${formatPosition(after)}`;
}

function pageLink(urls: StreamUrls, after: StreamPosition): Link {
  return { type: 'OrderedCollectionPage', id: pageUrl(urls, after) };
}

export function entryPoint(
  urls: StreamUrls,
  feed: { totalItems: number; lastPageAfter: StreamPosition },
  summary: string,
): Record<string, unknown> {
  return {
    '@context': ACTIVITY_STREAMS_CONTEXT,
    summary,
    type: 'OrderedCollection',
    id: urls.collection,
    totalItems: feed.totalItems,
    first: pageLink(urls, { commitSeq: '0', entityId: '0' }),
    last: pageLink(urls, feed.lastPageAfter),
  };
}

export interface PageOfActivities {
  after: StreamPosition;
  activities: ChangeActivity[];
  /** Start of the page before; absent on the first page. */
  prevAfter?: StreamPosition;
  /** Whether the page is full: then nothing can join it and `next` follows. */
  closed: boolean;
}

export function collectionPage(urls: StreamUrls, page: PageOfActivities): Record<string, unknown> {
  const last = page.activities.at(-1);
  return {
    '@context': ACTIVITY_STREAMS_CONTEXT,
    type: 'OrderedCollectionPage',
    id: pageUrl(urls, page.after),
    partOf: { type: 'OrderedCollection', id: urls.collection },
    totalItems: page.activities.length,
    ...(page.prevAfter && !isStreamStart(page.after) ? { prev: pageLink(urls, page.prevAfter) } : {}),
    ...(page.closed && last ? { next: pageLink(urls, last.position) } : {}),
    orderedItems: page.activities.map((activity) => activityDocument(urls, activity)),
  };
}

export function activityDocument(urls: StreamUrls, activity: ChangeActivity): Record<string, unknown> {
  const object = { type: activity.entityType, id: `${urls.records}/${activity.entityId}`, updated: activity.published };
  return {
    summary: `${activity.type} ${activity.entityType} ${activity.entityId}`,
    type: activity.type,
    published: activity.published,
    object,
    // EMM names no property for the replacement; Activity Streams' `target` carries it for consumers that want it without dereferencing.
    ...(activity.replacedBy
      ? { target: { type: activity.replacedBy.entityType, id: `${urls.records}/${activity.replacedBy.entityId}` } }
      : {}),
  };
}
