/** AdmissionReview v1 (and v1beta1, answered in kind): the parts this webhook reads and writes. */

import { stringifyJson } from '../../crd/json-int64.ts';

export const ADMISSION_API_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionApiVersion = (typeof ADMISSION_API_VERSIONS)[number];

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: { fieldValidation?: string; [key: string]: unknown };
}

/** metav1.Status as a webhook returns it in `response.status`. */
export interface Status {
  metadata?: Record<string, never>;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: AdmissionApiVersion;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** A review that cannot be answered: the HTTP layer turns it into a status code and a message. */
export class ReviewError extends Error {
  override name = 'ReviewError';
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the envelope of a decoded AdmissionReview; the object inside is left to the handlers. */
export function parseAdmissionReview(body: unknown): { apiVersion: AdmissionApiVersion; request: AdmissionRequest } {
  if (!isRecord(body)) throw new ReviewError(400, 'the body is not a JSON object: expected an AdmissionReview');
  const { apiVersion, kind, request } = body;
  if (kind !== 'AdmissionReview') {
    throw new ReviewError(400, `expected kind "AdmissionReview", got ${stringifyJson(kind ?? null)}`);
  }
  if (!ADMISSION_API_VERSIONS.includes(apiVersion as AdmissionApiVersion)) {
    throw new ReviewError(
      400,
      `unsupported AdmissionReview apiVersion ${stringifyJson(apiVersion ?? null)}: expected admission.k8s.io/v1 or admission.k8s.io/v1beta1`,
    );
  }
  if (!isRecord(request)) throw new ReviewError(400, 'AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '') {
    throw new ReviewError(400, 'AdmissionReview request has no uid');
  }
  if (typeof request.operation !== 'string' || !OPERATIONS.has(request.operation)) {
    throw new ReviewError(
      400,
      `AdmissionReview request has an unknown operation ${stringifyJson(request.operation ?? null)}: expected CREATE, UPDATE, DELETE or CONNECT`,
    );
  }
  const gvk = request.kind;
  if (
    !isRecord(gvk) ||
    typeof gvk.kind !== 'string' ||
    typeof gvk.version !== 'string' ||
    !(gvk.group === undefined || typeof gvk.group === 'string')
  ) {
    throw new ReviewError(400, 'AdmissionReview request has no kind (group, version, kind)');
  }
  for (const field of ['name', 'namespace', 'subResource'] as const) {
    const value = request[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new ReviewError(400, `AdmissionReview request.${field} must be a string`);
    }
  }
  return { apiVersion: apiVersion as AdmissionApiVersion, request: request as unknown as AdmissionRequest };
}

/** The review to send back: same apiVersion as the request, `response.uid` echoing `request.uid`. */
export function reviewResponse(apiVersion: AdmissionApiVersion, response: AdmissionResponse): AdmissionReview {
  return { apiVersion, kind: 'AdmissionReview', response };
}
