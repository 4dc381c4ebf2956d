import type { CompareCase, WebhookOnlyBehaviour } from './corpus.ts';

export const MODES = {
  A: 'schema-only (CRD schema + CEL, no webhook)',
  B: 'webhook-only (CRD without CEL + webhooks)',
  C: 'both (production CRD + webhooks)',
  D: 'direct (AdmissionReview posted to the webhook)',
  E: 'validating policy (CRD without CEL + ValidatingAdmissionPolicy, no webhook)',
  F: 'mutating policy (schema-only CRD + MutatingAdmissionPolicy, no webhook)',
} as const;
export type Mode = keyof typeof MODES;

export interface Outcome {
  allowed: boolean;
  code: number;
  message: string;
  warnings: string[];
  spec: unknown;
  finalizers: string[];
  latencyMs: number;
}

export type Aspect = 'verdict' | 'message' | 'warnings' | 'spec' | 'finalizers';

export interface Difference {
  aspect: Aspect;
  /** The modes whose value differs from A's. */
  modes: Mode[];
  /** The documented behaviour that explains it; undefined when nothing does. */
  behaviour: WebhookOnlyBehaviour | undefined;
}

export interface CaseResult {
  testCase: CompareCase;
  outcomes: Record<Mode, Outcome>;
  differences: Difference[];
}
