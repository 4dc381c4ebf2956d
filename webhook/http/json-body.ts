import { ReviewError } from '../admission/review.ts';

/** controller-runtime's limit (pkg/webhook/admission/http.go, maxRequestSize): 7 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024;
/** Far deeper than any object the API server sends; keeps recursive walks off the stack limit. */
export const DEFAULT_MAX_DEPTH = 100;

/** Nesting depth of a parsed JSON value, walked without recursion; stops counting past `limit`. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Checks the content type and decodes the body; every failure names the problem. */
export function decodeJsonBody(contentType: string | undefined, body: unknown, maxDepth: number): unknown {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new ReviewError(415, `contentType=${contentType ?? ''}, expected application/json`);
  }
  if (!Buffer.isBuffer(body) || body.length === 0) throw new ReviewError(400, 'request body is empty');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new ReviewError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
  if (exceedsDepth(parsed, maxDepth)) {
    throw new ReviewError(400, `request body nests deeper than ${maxDepth} levels`);
  }
  return parsed;
}
