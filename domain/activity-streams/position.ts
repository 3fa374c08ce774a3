// A place in the activity stream: the activity of one record in one committed
// transaction, ordered by the transaction's commit_seq, then by entity id. A
// page is named by the place it starts after; the start of the stream is 0-0.

export interface StreamPosition {
  commitSeq: string;
  entityId: string;
}

export const STREAM_START: StreamPosition = { commitSeq: '0', entityId: '0' };

const POSITION = /^(0|[1-9]\d{0,18})-(0|[1-9]\d{0,18})$/;

export function formatPosition(position: StreamPosition): string {
  return `${position.commitSeq}-${position.entityId}`;
}

/** The position a page name spells, or undefined when it spells none. */
export function parsePosition(text: string): StreamPosition | undefined {
  const match = POSITION.exec(text);
  return match ? { commitSeq: match[1]!, entityId: match[2]! } : undefined;
}

export function isStreamStart(position: StreamPosition): boolean {
  return position.commitSeq === '0' && position.entityId === '0';
}
