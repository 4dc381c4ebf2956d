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
  parseBody,
  type ReviewAnswer,
  type ReviewEnvelope,
  type ReviewTask,
  refusalOf,
  shapeProblem,
  valueShapeProblem,
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
  /** The body already parsed, its shape checked against limits at least as strict as `limits`. */
  parsed?: { value: unknown };
  /** Hears the envelope as soon as it decoded (a review worker reports it, to answer a stopped review). */
  decoded?: (envelope: ReviewEnvelope) => void;
}

/** Decodes a review body and decides it: plain data, in whichever thread runs it. Never throws. */
export function decide(decisions: ReviewDecisions, task: ReviewTask, options: DecideOptions = {}): Decided {
  try {
    const review = decodeReview(task, {
      ...options.limits,
      shapeChecked: options.shapeChecked,
      parsed: options.parsed,
    });
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

const UNPARSED = Symbol('unparsed');

/**
 * Up to this size a body within the in-thread bytes is parsed before its shape is read: parsing the
 * costliest 16 KiB (8,192 nested arrays) takes under 0.5 ms, and an ordinary review (1.5 KiB for a
 * CREATE, a few KiB for an UPDATE) fits. Larger bodies are read byte by byte first, as every body was.
 */
const PARSE_FIRST_MAX_BYTES = 16 * 1024;

/**
 * Whether a body is decided in this thread ('beyond': in a review worker), and how much of its
 * decoding is done. When the in-thread bounds are the stricter, a small body is parsed first and its
 * shape read from the value (a quarter of the time of reading it from the bytes,
 * docs/webhook-throughput.md). A body that does not parse is placed by its bytes, so it is refused
 * in the words decoding gives wherever it is decided.
 */
function inThreadPlacement(
  body: Uint8Array,
  inThread: InThreadBounds,
  boundsStricter: boolean,
): 'beyond' | Pick<DecideOptions, 'shapeChecked' | 'parsed'> {
  if (body.length > inThread.maxBytes) return 'beyond';
  if (boundsStricter && Buffer.isBuffer(body) && body.length > 0 && body.length <= PARSE_FIRST_MAX_BYTES) {
    let value: unknown;
    try {
      value = parseBody(body);
    } catch {
      value = UNPARSED;
    }
    if (value !== UNPARSED) {
      const problem = valueShapeProblem(value, inThread.maxDepth, inThread.maxValues);
      return problem === undefined ? { parsed: { value } } : 'beyond';
    }
  }
  const problem = shapeProblem(body, inThread.maxDepth, inThread.maxValues);
  return problem === undefined ? { shapeChecked: boundsStricter } : 'beyond';
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
    if (inThread === undefined || isolation === undefined) {
      placed?.('main');
      return finish(decide(decisions, task, { limits }));
    }
    const placement = inThreadPlacement(task.body, inThread, boundsStricter);
    if (placement === 'beyond') {
      placed?.('worker');
      return isolation.workers.evaluate(task).then(finish, (error) => refusalOf(error));
    }
    placed?.('main');
    return finish(decide(decisions, task, { limits, ...placement }));
  };
}
