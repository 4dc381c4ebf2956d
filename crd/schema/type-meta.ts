/**
 * The checks on `kind` and `apiVersion` that happen before a custom resource is decoded
 * (apimachinery's unstructured JSON scheme, handlers/create.go and rest.go).
 */

import type { CrdTarget, FieldValidation } from '../admission.ts';
import { compareGoStrings, goJsonMarshal, goQuote } from '../apimachinery/go-format.ts';
import { stringifyJson } from '../json-int64.ts';
import { isJsonObject, type JsonObject } from '../json-value.ts';
import { META_FIELDS } from './prune.ts';

export interface TypeMetaRejection {
  rejection: { message: string; decodeErrors: string[]; warnings: string[] };
}

export interface TypeMetaAccepted {
  kind: string;
  object: JsonObject;
}

/** summarizeData (handlers/rest.go): the first 30 bytes of a JSON body, then " ...". */
function summarize(body: string): string {
  const bytes = Buffer.from(body, 'utf8');
  return bytes.length > 30 ? `${bytes.subarray(0, 30).toString('utf8')} ...` : body;
}

const reject = (message: string, decodeErrors: string[] = [], warnings: string[] = []): TypeMetaRejection => ({
  rejection: { message, decodeErrors, warnings },
});

/** A 400 for a body without a kind or of another API version; otherwise the kind it names. */
export function checkTypeMeta(
  input: unknown,
  options: CrdTarget,
  fieldValidation: FieldValidation,
): TypeMetaAccepted | TypeMetaRejection {
  if (!isJsonObject(input)) {
    return reject(`the object provided is unrecognized (must be of type ${options.kind}): ${goJsonMarshal(input)}`);
  }
  if (typeof input.kind !== 'string' || input.kind === '') {
    // The server prints the request body; the engine prints the object as JSON.
    const body = stringifyJson(input);
    return reject(
      `the object provided is unrecognized (must be of type ${options.kind}): Object 'Kind' is missing in '${body}' (${summarize(body)})`,
    );
  }
  const expected = `${options.group}/${options.version}`;
  const apiVersion = typeof input.apiVersion === 'string' ? input.apiVersion : '';
  const mismatch = () =>
    `the API version in the data (${apiVersion}) does not match the expected API version (${expected})`;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (group === options.group && version !== options.version) {
    // The decoder has no schema for that version: everything but apiVersion, kind and metadata is unknown.
    const unknown = Object.keys(input)
      .filter((k) => !META_FIELDS.has(k))
      .sort(compareGoStrings)
      .map((k) => `unknown field "${k}"`);
    if (fieldValidation === 'Strict' && unknown.length > 0) {
      return reject(
        `${input.kind} in version ${goQuote(version)} cannot be handled as a ${options.kind}: strict decoding error: ${unknown.join(', ')}`,
        unknown,
      );
    }
    return reject(mismatch(), [], fieldValidation === 'Warn' ? unknown : []);
  }
  if (apiVersion !== expected) return reject(mismatch());
  return { kind: input.kind, object: input };
}
