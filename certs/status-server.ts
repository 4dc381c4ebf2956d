import type { Check, CheckResult } from '../observability/probes-server.ts';

/**
 * The `--watch` readiness check `bootstrap`, for observability/probes-server.ts: ok once a pass has stored
 * the certificates and injected the CA bundle, failing while no pass has succeeded or when the
 * latest one failed (the reason is logged, and withheld from the HTTP answer).
 */
export class PassStatus implements Check {
  readonly name = 'bootstrap';
  private lastOk: Date | undefined;
  private lastError: string | undefined;

  succeeded(at: Date): void {
    this.lastOk = at;
    this.lastError = undefined;
  }

  failed(error: unknown): void {
    this.lastError = error instanceof Error ? error.message : String(error);
  }

  check(): CheckResult {
    if (this.lastError !== undefined) return { ok: false, reason: `last pass failed: ${this.lastError}` };
    if (!this.lastOk) return { ok: false, reason: 'no pass has completed yet' };
    return { ok: true };
  }
}
