/** The webhook as a library: build the Express app (or the plain listener) yourself and drive it with supertest. */
export { type HostnameIndex, MemoryHostnameIndex, type SiteRef } from './admission/hostname-index.ts';
export { createMutator, defaultHostname, type MutatorOptions } from './admission/mutate.ts';
export { allowed, denied, errored, patched } from './admission/responses.ts';
export {
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  parseAdmissionReview,
  ReviewError,
} from './admission/review.ts';
export { SiteSchemas } from './admission/site-schemas.ts';
export { createValidator, type ValidatorOptions } from './admission/validate.ts';
export { convertReview, parseConversionReview } from './conversion/convert.ts';
export {
  type AdmissionHandler,
  createWebhookApp,
  createWebhookListener,
  type Readiness,
  type WebhookAppOptions,
} from './http/app.ts';
export { WebhookMetrics } from './http/metrics.ts';
export { createReviewEndpoint, type ReviewEndpoint } from './http/review-endpoint.ts';
export type { ReviewPath, ReviewTask } from './review/codec.ts';
export { createReviewPipeline, type ReviewDecisions, type ReviewPipeline, siteDecisions } from './review/pipeline.ts';
export { type HostnameSource, type RunningWebhook, startWebhookServer, type WebhookServerOptions } from './server.ts';
