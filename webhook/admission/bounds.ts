import { cutText } from '../../crd/index.ts';

/**
 * What the webhook sends back and logs stays bounded whatever the input: the API server's own
 * Warning-header recorder for warnings (crd/apimachinery/warning-list.ts), and a cap on echoed
 * messages. A value in a message is echoed whole by the API server, whose request
 * bodies are at most 3 MiB; a direct caller can send the webhook 7 MiB, so past MESSAGE_LIMIT
 * characters a message is cut (a denial stays a denial, with its cause and field intact).
 */

/** Characters of a Status message or cause kept; far beyond any message of an object the API server accepts whole. */
export const MESSAGE_LIMIT = 64 * 1024;
/**
 * The engine cuts a message this short, so that with its note (`... (N more characters)`, at most 42
 * characters) it stays within MESSAGE_LIMIT: cut again, the note would miscount what was left out.
 */
export const ENGINE_MESSAGE_LIMIT = MESSAGE_LIMIT - 64;
/** Characters of a message written to the log. */
export const LOG_MESSAGE_LIMIT = 1024;
/** Characters of an input value (a review's uid) written to the log as a field; a UID has 36. */
export const LOG_FIELD_LIMIT = 128;

/** A message cut to `limit` characters, saying how much was left out (the engine's cutText). */
export function boundMessage(message: string, limit: number = MESSAGE_LIMIT): string {
  return cutText(message, limit);
}
