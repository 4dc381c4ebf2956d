import type { KubeStatus } from './objects.ts';

/** What the server answered: the HTTP status code, its metav1.Status if it sent one, and the raw body. */
export interface ServerAnswer {
  code: number;
  status?: Partial<KubeStatus> | undefined;
  text?: string;
}

/** A non-2xx answer from the API server, carrying its metav1.Status. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: number;
  readonly reason: string;
  readonly method: string;
  readonly path: string;
  /** The server's own words (metav1.Status message). */
  readonly serverMessage: string;

  constructor(method: string, path: string, answer: ServerAnswer) {
    const { code, status, text = '' } = answer;
    super(`${method} ${path}: ${code} ${status?.reason ?? ''}: ${status?.message ?? text.slice(0, 300)}`);
    this.serverMessage = status?.message ?? text.slice(0, 300);
    this.code = code;
    this.reason = status?.reason ?? '';
    this.method = method;
    this.path = path;
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.code === 404;
}

/** 409 with reason Conflict: a stale resourceVersion. */
export function isConflict(error: unknown): boolean {
  return error instanceof ApiError && error.code === 409 && error.reason !== 'AlreadyExists';
}

export function isAlreadyExists(error: unknown): boolean {
  return error instanceof ApiError && error.code === 409 && error.reason === 'AlreadyExists';
}

/** 410 Gone: a resourceVersion or continue token older than the server keeps. */
export function isGone(error: unknown): boolean {
  return error instanceof ApiError && error.code === 410;
}

/** `error` when the server answered with a failure; anything else (a network failure, an abort) is thrown on. */
export function apiErrorOrThrow(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  throw error;
}

/** The server's own words for a failed call (its Status message, or the start of the body), else `HTTP <code>`. */
export function statusMessage(error: ApiError): string {
  return error.serverMessage || `HTTP ${error.code}`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
