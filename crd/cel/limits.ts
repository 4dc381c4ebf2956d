/**
 * The cost limits of CEL rules (k8s.io/apiserver@v0.37.2/pkg/apis/cel/config.go, apiextensions-apiserver
 * pkg/apis/apiextensions/validation/validation.go) and the CRD-time message for exceeding them.
 */

/** celconfig.PerCallLimit. */
export const PER_CALL_LIMIT = 1_000_000;
/** celconfig.RuntimeCELCostBudget. */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** StaticEstimatedCostLimit. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** StaticEstimatedCRDCostLimit. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

/**
 * Rules whose estimate with the declared sizes is at most this are charged that estimate; costlier rules are
 * instrumented and charged what they actually evaluate.
 */
export const CHEAP_RULE_COST = 10_000;

/** getCostErrorMessage in validation.go. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const factor = cost / limit;
  let text: string;
  if (factor > 100) text = 'more than 100x';
  else if (factor < 1.5) text = `${factor.toFixed(6)}x`;
  else text = `${factor.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
