import type { FieldError, FieldErrorType } from './apimachinery/field-error.ts';
import type { JsonObject } from './json-value.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** What admit() needs to know about the CRD: kind and group for messages, the version, the scope. */
export interface CrdTarget {
  /** `StaticSite.staticsite.dev "shop" is invalid` */
  kind: string;
  group: string;
  /** The served version the object is sent to (`apiVersion` must be `<group>/<version>`). */
  version: string;
  /** Namespaced resources need a namespace. */
  namespaced: boolean;
}

/** One request: what the API server knows beside the object. */
export interface AdmitOptions {
  /** The old object: admit validates an update instead of a create. */
  oldObject?: unknown;
  /** Default `Warn`, the API server's default when the client does not ask. */
  fieldValidation?: FieldValidation;
  /** The request's namespace: set on the object when absent, and it must match when present. */
  namespace?: string;
  /**
   * Makes a name from `metadata.generateName` on create when `metadata.name` is empty, as the API
   * server does before validating (see simpleNameGenerator). Without it the name stays empty and
   * only generateName is checked, which keeps admit() deterministic.
   */
  generateName?: (base: string) => string;
  /**
   * Cut the 422 message to this many characters (cutText: the rest counted, not built), so a
   * message the API server would print in full costs a server no more than it sends back. Default: whole.
   */
  messageLimit?: number;
  /** At most this many `causes` (the webhook sends 100); every error stays in `errors`. Default: all. */
  causeLimit?: number;
  /** What the JSON decoder met in the request's text (JSON.parse sees neither); default none. */
  textDecoding?: TextDecoding;
}

/** The API server's JSON decoder's findings in a request's text, before any schema is applied. */
export interface TextDecoding {
  /** Paths of keys repeated in one object, in the decoder's order: strict decoding errors. */
  duplicateFields?: readonly string[];
  /** The decoder's error (a number float64 cannot hold): the request is a 400. */
  error?: string;
}

/** Runs a version's x-kubernetes-validations rules on the pruned, defaulted, validated object. */
export type RuleRunner = (
  object: JsonObject,
  oldObject: JsonObject | undefined,
) => { errors: FieldError[]; warnings: string[] };

/** One entry of the 422 status's `details.causes`. */
export interface StatusCause {
  reason: FieldErrorType;
  message: string;
  field: string;
}

export interface AdmissionResult {
  allowed: boolean;
  /** 200 allowed, 400 undecodable (strict unknown fields, malformed metadata), 422 invalid. */
  code: 200 | 400 | 422;
  message: string;
  errors: FieldError[];
  /** The individual decode errors of a 400 (for example `unknown field "spec.x"`). */
  decodeErrors: string[];
  causes: StatusCause[];
  /**
   * Every warning the request adds to the API server's recorder, in order, each once and whole; a
   * client sees recordWarnings() of them, after a deprecated version's (compile.ts deprecationWarnings).
   */
  warnings: string[];
  /** The pruned and defaulted object as the API server would store it (also on denial). */
  object: JsonObject | undefined;
}
