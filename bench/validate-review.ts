/**
 * The POST /validate body the webhook benchmarks send. Default: the review kube-apiserver v1.37.2
 * sent for a StaticSite create after our mutating webhook ran (test/support/capture-admission-review.ts:
 * compact JSON with managedFields, userInfo and options, 1.4 KB). BENCH_REVIEW=minimal: a
 * hand-written 703-byte review of the same kind of site, the body of earlier recorded runs.
 */
import { readFileSync } from 'node:fs';

const fixture = (name: string) => readFileSync(new URL(`../test/fixtures/admission/${name}`, import.meta.url), 'utf8');

export function validateReview(): { name: string; text: string } {
  if (process.env.BENCH_REVIEW === 'minimal') {
    return { name: 'minimal', text: fixture('create-prod-one-replica.json').replace('"replicas": 1', '"replicas": 2') };
  }
  return { name: 'apiserver', text: fixture('apiserver-validate-create.json').trimEnd() };
}
