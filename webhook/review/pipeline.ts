/**
 * The review pipeline, the one path every review takes whatever calls it (the HTTPS server, the
 * Express app, a user's in-process test):
 *
 *   decode (codec.ts) → decide (admission: admission/mutate.ts or admission/validate.ts; conversion:
 *   conversion/convert.ts) → the cross-object steps (cross-object.ts) → encode once (codec.ts).
 *
 * Where a review is decided depends on its size: a body within small bounds (bytes, values, depth)
 * is decided where it landed, in the main thread, because its work is bounded by its size (a few
 * milliseconds at most, docs/webhook-isolation.md); any other goes to an isolated review worker
 * (webhook/isolation/), whose heap and deadline bound what a review built to exhaust them can take.
 */
import { CONVERT_PATH, MUTATE_PATH } from '../../api/constants.ts';
import { createMutator } from '../admission/mutate.ts';
import type { AdmissionRequest, AdmissionResponse } from '../admission/review.ts';
import { shardRequestOf } from '../admission/shard-label.ts';
import { SiteSchemas } from '../admission/site-schemas.ts';
import { createSchemaValidator } from '../admission/validate.ts';
import { convertReview } from '../conversion/convert.ts';
import {
  conversionDecision,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_VALUES,
  type Decided,
  type DecodeLimits,
  decodeReview,
  encodeAnswer,
  envelopeOf,
  type ReviewAnswer,
  type ReviewEnvelope,
  type ReviewTask,
  refusalOf,
  shapeProblem,
} from './codec.ts';
import { applySteps, type CrossObjectStep, type Verdict } from './cross-object.ts';

/** The admission decisions: plain functions of the request. */
export interface ReviewDecisions {
  mutate(request: AdmissionRequest): AdmissionResponse;
  validate(request: AdmissionRequest): Verdict;
}

/** The StaticSite decisions: the CRD's schemas compiled once, the mutator and the schema validator. */
export function siteDecisions(options: { baseDomain: string }): ReviewDecisions {
  const schemas = new SiteSchemas();
  return {
    mutate: createMutator({ schemas, baseDomain: options.baseDomain }),
    validate: createSchemaValidator({ schemas }),
  };
}

export interface DecideOptions {
  limits?: DecodeLimits;
  /** The body's shape was already checked against limits at least as strict as `limits`. */
  shapeChecked?: boolean;
  /** Hears the envelope as soon as it decoded (a review worker reports it, to answer a stopped review). */
  decoded?: (envelope: ReviewEnvelope) => void;
}

/** Decodes a review body and decides it: plain data, in whichever thread runs it. Never throws. */
export function decide(decisions: ReviewDecisions, task: ReviewTask, options: DecideOptions = {}): Decided {
  try {
    const review = decodeReview(task, { ...options.limits, shapeChecked: options.shapeChecked });
    const envelope = envelopeOf(review);
    options.decoded?.(envelope);
    const { uid, operation } = envelope;
    if (review.path === CONVERT_PATH) return conversionDecision(uid, convertReview(review.request));
    const { apiVersion, request } = review;
    if (review.path === MUTATE_PATH) {
      const response = decisions.mutate(request);
      return { kind: 'admission', apiVersion, uid, operation, response, shard: shardRequestOf(request, response) };
    }
    return { kind: 'admission', apiVersion, uid, operation, ...decisions.validate(request) };
  } catch (error) {
    return refusalOf(error);
  }
}

/** The bounds within which a review is decided in the main thread (REVIEW_ISOLATION in server-settings.ts). */
export interface InThreadBounds {
  maxBytes: number;
  maxValues: number;
  maxDepth: number;
}

/** Where reviews beyond the in-thread bounds are decided: the review workers (webhook/isolation/review-pool.ts). */
export interface ReviewIsolation {
  evaluate(task: ReviewTask): Promise<Decided>;
}

export type ReviewPlacement = 'main' | 'worker';

export interface ReviewPipelineOptions {
  decisions: ReviewDecisions;
  limits?: DecodeLimits;
  /** The cross-object steps, in order (cross-object.ts crossObjectSteps). */
  steps?: readonly CrossObjectStep[];
  /** None: every review is decided in the calling thread. */
  isolation?: { workers: ReviewIsolation; inThread: InThreadBounds };
  /** Told where each review was decided. */
  placed?: (where: ReviewPlacement) => void;
}

/** A review body in, the answer to send out: synchronous when the review was decided in this thread. */
export type ReviewPipeline = (task: ReviewTask) => ReviewAnswer | Promise<ReviewAnswer>;

export function createReviewPipeline(options: ReviewPipelineOptions): ReviewPipeline {
  const { decisions, limits = {}, steps = [], isolation, placed } = options;
  const finish = (decided: Decided): ReviewAnswer => {
    if (decided.kind !== 'admission' || steps.length === 0) return encodeAnswer(decided);
    try {
      return encodeAnswer(applySteps(steps, decided));
    } catch (error) {
      return refusalOf(error);
    }
  };
  const inThread = isolation?.inThread;
  // A body within the in-thread bounds needs no second shape check when they are the stricter.
  const boundsStricter =
    inThread !== undefined &&
    inThread.maxDepth <= (limits.maxDepth ?? DEFAULT_MAX_DEPTH) &&
    inThread.maxValues <= (limits.maxValues ?? DEFAULT_MAX_VALUES);
  return (task) => {
    const small =
      inThread === undefined ||
      (task.body.length <= inThread.maxBytes &&
        shapeProblem(task.body, inThread.maxDepth, inThread.maxValues) === undefined);
    if (small || isolation === undefined) {
      placed?.('main');
      return finish(decide(decisions, task, { limits, shapeChecked: boundsStricter && small }));
    }
    placed?.('worker');
    return isolation.workers.evaluate(task).then(finish, (error) => refusalOf(error));
  };
}
