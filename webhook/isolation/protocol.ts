/** The messages between the review pool and its workers. */
import type { Decided, DecodeLimits, ReviewEnvelope, ReviewPath } from '../review/codec.ts';

/** What every worker is started with. */
export interface ReviewWorkerData {
  baseDomain: string;
  limits: DecodeLimits;
}

/** A review to decide; `body` is transferred, not copied. */
export interface ToWorker {
  id: number;
  path: ReviewPath;
  contentType: string | undefined;
  body: ArrayBuffer;
}

export type FromWorker =
  /** Loaded and compiled: it takes reviews now; its heap may grow to `heapLimitMb`. */
  | { type: 'ready'; heapLimitMb: number }
  /** The review's envelope decoded: from now on a stopped review is answered as a denial. */
  | { type: 'parsed'; id: number; envelope: ReviewEnvelope }
  /** The decision, before the cross-object steps (they run in the main thread, where the indexes are). */
  | { type: 'decided'; id: number; decided: Decided };
