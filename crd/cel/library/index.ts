import type { Environment } from '@marcbachmann/cel-js';
import { celEquals } from './compare.ts';
import { registerMissingConversions } from './conversions.ts';
import { registerExtLists } from './ext-lists.ts';
import { registerFormat } from './format.ts';
import { registerIPAndCIDR } from './ip-cidr.ts';
import { registerLists } from './lists.ts';
import { registerOptionals } from './optionals.ts';
import { registerQuantity } from './quantity.ts';
import type { RegexCache } from './re2.ts';
import { registerRegex } from './regex.ts';
import { registerSemver } from './semver.ts';
import { registerSets } from './sets.ts';
import { registerSortBy } from './sort-by.ts';
import { registerStrings } from './strings.ts';
import { registerTwoVarComprehensions } from './two-var-comprehensions.ts';
import { registerUrls } from './urls.ts';

/** Library types whose values compare with `==` (cel-go: ref.Val.Equal). */
const EQUATABLE_TYPES = [
  'kubernetes.URL',
  'kubernetes.Quantity',
  'net.IP',
  'net.CIDR',
  'kubernetes.Semver',
  'kubernetes.NamedFormat',
];

/** Registers every Kubernetes CEL library and the cel-go extensions the API server enables. */
export function registerKubernetesLibraries(env: Environment, regexCache: RegexCache): void {
  registerMissingConversions(env);
  registerLists(env);
  registerExtLists(env);
  registerOptionals(env);
  registerSortBy(env);
  registerRegex(env, regexCache);
  registerUrls(env);
  registerQuantity(env);
  registerIPAndCIDR(env);
  registerFormat(env);
  registerSemver(env);
  registerSets(env);
  registerStrings(env);
  registerTwoVarComprehensions(env);
  for (const t of EQUATABLE_TYPES) env.registerOperator(`${t} == ${t}`, (a: unknown, b: unknown) => celEquals(a, b));
  // cel-go's checker lets null meet an optional, a struct (the library types are object types), a
  // duration or a timestamp (checker/types.go isLegacyNullable); none of them equals null at run time.
  for (const t of [...EQUATABLE_TYPES, 'optional', 'google.protobuf.Duration', 'google.protobuf.Timestamp']) {
    env.registerOperator(`${t} == null`, () => false);
  }
}
