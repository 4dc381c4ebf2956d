import { Agent, request as httpsRequest } from 'node:https';
import type { AdmissionResponse } from '../webhook/admission/review.ts';

/** Posts reviews straight to the webhook over HTTPS, as a user's test would. */
export class ReviewClient {
  private readonly agent: Agent;
  private readonly url: string;

  constructor(url: string, caPem: string) {
    this.url = url;
    this.agent = new Agent({ keepAlive: true, ca: caPem });
  }

  /** POSTs a review and resolves with the webhook's answer (any HTTP status; the body must be JSON). */
  async post(path: string, review: unknown): Promise<{ response: AdmissionResponse }> {
    return (await this.send(path, review)).body;
  }

  /** POSTs a review; resolves with the HTTP status and the decoded answer. */
  send(path: string, review: unknown): Promise<{ status: number; body: { response: AdmissionResponse } }> {
    const payload = JSON.stringify(review);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${this.url}${path}`,
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
