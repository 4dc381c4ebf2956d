import { SystemClock } from '../clock/clock.ts';
import { HttpsTransport } from '../kube/transport.ts';
import type { AdmissionResponse } from '../webhook/admission/review.ts';

/** Posts reviews straight to the webhook over HTTPS (kube/'s transport, trusting `caPem`), as a user's test would. */
export class ReviewClient {
  private readonly transport: HttpsTransport;

  /** `requestTimeoutMs`: a request unanswered that long fails (default: none). */
  constructor(url: string, caPem: string, requestTimeoutMs?: number) {
    this.transport = HttpsTransport.direct(
      { server: url, tls: { ca: caPem } },
      { clock: new SystemClock(), maxSockets: Number.POSITIVE_INFINITY, requestTimeoutMs },
    );
  }

  /** POSTs a review and resolves with the webhook's answer (any HTTP status; the body must be JSON). */
  async post(path: string, review: unknown): Promise<{ response: AdmissionResponse }> {
    return (await this.send(path, review)).body;
  }

  /** POSTs a review; resolves with the HTTP status and the decoded answer. */
  async send(path: string, review: unknown): Promise<{ status: number; body: { response: AdmissionResponse } }> {
    const res = await this.transport.request('POST', path, { body: review });
    if (res.body === undefined) {
      throw new Error(`POST ${path}: HTTP ${res.status}, not JSON: ${res.text.slice(0, 500)}`);
    }
    return { status: res.status, body: res.body as { response: AdmissionResponse } };
  }

  /** POSTs `body` as it is (any bytes, labelled JSON); resolves with the HTTP status and the text. */
  async raw(path: string, body: string): Promise<{ status: number; text: string }> {
    const res = await this.transport.request('POST', path, { rawBody: body });
    return { status: res.status, text: res.text };
  }

  close(): void {
    this.transport.close();
  }
}
