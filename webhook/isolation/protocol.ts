/** The messages between the review pool and its workers. */
import type { ReviewAnswer, ReviewEnvelope, ReviewLimits, ReviewPath } from '../http/review-answer.ts';

/** What every worker is started with. */
export interface ReviewWorkerData {
  baseDomain: string;
  limits: ReviewLimits;
}

/** A review to answer; `body` is transferred, not copied. */
export interface ToWorker {
  id: number;
  path: ReviewPath;
  contentType: string | undefined;
  body: ArrayBuffer;
}

export type FromWorker =
  /** Loaded and compiled: it takes reviews now; its heap may grow to `heapLimitMb`. */
  | { type: 'ready'; heapLimitMb: number }
  /** The review's envelope parsed: from now on a stopped review is answered as a denial. */
  | { type: 'parsed'; id: number; envelope: ReviewEnvelope }
  | { type: 'answer'; id: number; answer: ReviewAnswer };
