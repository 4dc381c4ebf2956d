import { ConversionError, convertStaticSite } from '../../api/index.ts';
import { stringifyJson } from '../../crd/json-int64.ts';
import { boundMessage } from '../admission/bounds.ts';
import { ReviewError } from '../admission/review.ts';

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: unknown[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: unknown[];
  result: { status: 'Success' | 'Failure'; message?: string };
}

export interface ConversionReview {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the envelope of a ConversionReview v1. */
export function parseConversionReview(body: unknown): ConversionRequest {
  if (!isRecord(body)) throw new ReviewError(400, 'the body is not a JSON object: expected a ConversionReview');
  if (body.kind !== 'ConversionReview') {
    throw new ReviewError(400, `expected kind "ConversionReview", got ${stringifyJson(body.kind ?? null)}`);
  }
  if (body.apiVersion !== 'apiextensions.k8s.io/v1') {
    throw new ReviewError(
      400,
      `unsupported ConversionReview apiVersion ${stringifyJson(body.apiVersion ?? null)}: expected apiextensions.k8s.io/v1`,
    );
  }
  const request = body.request;
  if (!isRecord(request)) throw new ReviewError(400, 'ConversionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '')
    throw new ReviewError(400, 'ConversionReview request has no uid');
  if (typeof request.desiredAPIVersion !== 'string') {
    throw new ReviewError(400, 'ConversionReview request has no desiredAPIVersion');
  }
  if (!Array.isArray(request.objects)) throw new ReviewError(400, 'ConversionReview request has no objects list');
  return request as unknown as ConversionRequest;
}

/** A failed conversion: nothing converted, the message (bounded) says why. */
export function conversionFailure(uid: string, message: string): ConversionReview {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, convertedObjects: [], result: { status: 'Failure', message: boundMessage(message) } },
  };
}

/**
 * Converts every object to the desired version. One object that cannot be converted fails the
 * whole review (the API server accepts all or nothing) with a message naming it.
 */
export function convertReview(request: ConversionRequest): ConversionReview {
  const convertedObjects: unknown[] = [];
  for (const [index, object] of request.objects.entries()) {
    try {
      convertedObjects.push(convertStaticSite(object, request.desiredAPIVersion));
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      const meta = isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
      // Only strings are printed: a caller's object may be anything (even without a prototype).
      const namespace = typeof meta.namespace === 'string' ? meta.namespace : '';
      const who = typeof meta.name === 'string' ? `${namespace}/${meta.name}` : `objects[${index}]`;
      return conversionFailure(request.uid, `cannot convert ${who} to ${request.desiredAPIVersion}: ${error.message}`);
    }
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid: request.uid, convertedObjects, result: { status: 'Success' } },
  };
}
