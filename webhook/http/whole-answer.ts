import type { ServerResponse } from 'node:http';

/** Room for the status line and headers written with an answer's body. */
const HEADER_ROOM = 16 * 1024;

interface WritableLimit {
  highWaterMark: number;
}

/** The socket's writable state, where Node keeps the limit past which a write asks its caller to wait. */
function writableLimitOf(res: ServerResponse): WritableLimit | undefined {
  const state = (res.socket as unknown as { _writableState?: { highWaterMark?: unknown } } | null)?._writableState;
  return typeof state?.highWaterMark === 'number' ? (state as WritableLimit) : undefined;
}

/**
 * Writes a whole answer so that it alone never marks its connection as needing to drain.
 *
 * Node's HTTP server pauses a keep-alive connection, socket and parser, when the next request's
 * headers arrive while the last answer still needs to drain. Over TLS, the rest of the bytes
 * already decrypted in that read still reach the paused parser, which fails with HPE_PAUSED, and
 * the connection is reset under the next request. An answer of a socket's limit (64 KiB) or more
 * needs to drain until its write completes, and a write made after the poll phase completes only
 * after the next poll phase, when the caller's next request is often there already. The answer is
 * one write with nothing behind it, so the limit is raised for that write alone; answers queued
 * behind a pipelining client's unread ones are still counted against the socket's own limit
 * (docs/webhook-throughput.md).
 */
export function writeWholeAnswer(res: ServerResponse, status: number, contentType: string, text: string): void {
  const bytes = Buffer.byteLength(text);
  const limit = writableLimitOf(res);
  const saved = limit?.highWaterMark;
  if (limit && saved !== undefined && saved < bytes + HEADER_ROOM) limit.highWaterMark = bytes + HEADER_ROOM;
  try {
    res.writeHead(status, { 'content-type': contentType, 'content-length': bytes }).end(text);
  } finally {
    if (limit && saved !== undefined) limit.highWaterMark = saved;
  }
}
