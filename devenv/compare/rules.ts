import type { Aspect, CaseResult, Mode, Outcome } from './outcome.ts';

/** One rule of the StaticSite API, the corpus cases that exercise it, and what shows it is enforced. */
export interface RuleSpec {
  rule: string;
  cases: string[];
  aspects: Aspect[];
}

export const RULES: RuleSpec[] = [
  {
    rule: 'OpenAPI schema: types, bounds, enum, required fields',
    cases: [
      'replicas-zero',
      'replicas-eleven',
      'replicas-string',
      'tier-unknown',
      'content-empty',
      'content-missing',
      'hostname-too-long',
      'spec-missing',
      'two-violations',
    ],
    aspects: ['verdict'],
  },
  {
    rule: 'unknown fields pruned with a warning, refused under Strict',
    cases: ['unknown-field-warn', 'unknown-field-strict', 'unknown-top-level-field'],
    aspects: ['verdict', 'warnings'],
  },
  {
    rule: 'prod sites need 2 replicas (CEL)',
    cases: ['prod-one-replica', 'prod-default-replicas'],
    aspects: ['verdict'],
  },
  {
    rule: 'hostname is an RFC 1123 subdomain (CEL)',
    cases: ['hostname-uppercase', 'hostname-trailing-dot'],
    aspects: ['verdict'],
  },
  { rule: 'tier is immutable (CEL transition rule)', cases: ['tier-change', 'replicas-change'], aspects: ['verdict'] },
  { rule: 'valid objects admitted', cases: ['minimal-dev', 'prod-two-replicas', 'max-replicas'], aspects: ['verdict'] },
  { rule: 'one site per hostname, across namespaces', cases: ['duplicate-hostname'], aspects: ['verdict'] },
  { rule: 'hostname defaulted from name and namespace', cases: ['hostname-default'], aspects: ['spec'] },
  { rule: 'finalizer added at admission', cases: ['minimal-dev'], aspects: ['finalizers'] },
  { rule: 'v1alpha1 served (conversion)', cases: ['v1alpha1-create'], aspects: ['verdict'] },
];

export type RuleStatus = 'enforced' | 'enforced, other message' | 'not expressible' | 'differs';

export interface RuleRow {
  rule: string;
  cases: string[];
  ways: Record<Mode, RuleStatus>;
}

/**
 * A 422 message with its errors sorted: the API server validates an object's properties in Go map
 * order (kube-openapi object_validator.go ranges over a map), so several errors come in any order.
 */
export function errorSet(message: string): string {
  const match = /^(.* is invalid: )\[(.*)\]$/.exec(message);
  if (!match) return message;
  const errors = (match[2] ?? '').split(/, (?=(?:[A-Za-z][\w.[\]-]*|<nil>): )/);
  return `${match[1]}[${errors.sort().join(', ')}]`;
}

/** JSON with its object keys sorted: the same value always gives the same text. */
export const stableJson = (v: unknown) =>
  JSON.stringify(v ?? null, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x,
  );

/**
 * One aspect of an outcome as comparable text. `acrossWays`: each way runs in a namespace of its own
 * (compare-a … compare-f), so a value made from the namespace (the default hostname) is compared with
 * the namespace as one placeholder.
 */
export function aspectValue(o: Outcome, aspect: Aspect, options: { acrossWays?: boolean } = {}): string {
  switch (aspect) {
    case 'verdict':
      return o.allowed ? 'allowed' : `denied ${o.code}`;
    case 'message':
      return errorSet(o.message);
    case 'warnings':
      return stableJson(o.warnings);
    case 'spec':
      return options.acrossWays
        ? stableJson(o.spec).replace(/\.compare-[a-f]\./g, '.<namespace>.')
        : stableJson(o.spec);
    case 'finalizers':
      return stableJson(o.finalizers);
  }
}

const value = (o: Outcome, aspect: Aspect) => aspectValue(o, aspect, { acrossWays: true });

/**
 * Each rule against each way, measured against C (the production setup, CRD with its rules plus the
 * webhooks): `enforced` when the way answers as C on every case of the rule; `not expressible` when
 * it answers as no rule at all would (as A, where C's difference from A is a documented behaviour);
 * `differs` otherwise. `other message`: the verdicts agree, the denial texts do not.
 */
export function ruleTable(results: CaseResult[], modes: Mode[]): RuleRow[] {
  const byName = new Map(results.map((r) => [r.testCase.name, r]));
  return RULES.map((spec) => {
    const cases = spec.cases.map((name) => byName.get(name)).filter((r): r is CaseResult => r !== undefined);
    const ways = {} as Record<Mode, RuleStatus>;
    for (const mode of modes) {
      const same = cases.every((r) => spec.aspects.every((a) => value(r.outcomes[mode], a) === value(r.outcomes.C, a)));
      if (same) {
        const denied = cases.filter((r) => !r.outcomes.C.allowed);
        const messages = denied.every((r) => errorSet(r.outcomes[mode].message) === errorSet(r.outcomes.C.message));
        ways[mode] = messages ? 'enforced' : 'enforced, other message';
        continue;
      }
      const asNoRule = cases.every((r) =>
        spec.aspects.every(
          (a) =>
            value(r.outcomes[mode], a) === value(r.outcomes.C, a) ||
            (value(r.outcomes[mode], a) === value(r.outcomes.A, a) &&
              r.differences.some((d) => d.aspect === a && d.modes.includes('C') && d.behaviour !== undefined)),
        ),
      );
      ways[mode] = asNoRule ? 'not expressible' : 'differs';
    }
    return { rule: spec.rule, cases: cases.map((r) => r.testCase.name), ways };
  });
}
