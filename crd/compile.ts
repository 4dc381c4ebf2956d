import type { CrdTarget, RuleRunner } from './admission.ts';
import type { CustomResourceDefinition } from './apiextensions.ts';
import { type FieldError, invalidMessage } from './apimachinery/field-error.ts';
import { type CompiledRules, compileRules } from './cel/compile.ts';
import type { CelEnvironment } from './cel/environment.ts';
import { evaluate } from './cel/evaluate.ts';
import { validateDefaults } from './default-validation.ts';
import { deprecationWarnings } from './deprecation.ts';
import { jsonEqual } from './json-value.ts';
import { type CompiledSchema, compileSchema } from './schema/compile.ts';
import { invalidPatterns } from './schema/pattern-check.ts';

/**
 * One served version of a CRD, compiled once: its structural schema and its CEL rules together.
 * There is no way to get one without the other, so whatever admits with it runs the rules.
 */
export interface CompiledCrdVersion {
  readonly schema: CompiledSchema;
  readonly rules: CompiledRules;
  readonly target: CrdTarget;
  /** Runs the version's x-kubernetes-validations rules (ratcheting on update). */
  readonly runRules: RuleRunner;
  /** The API server's warnings on every request for this version (a deprecated version's). */
  readonly deprecationWarnings: readonly string[];
}

/** The CRD cannot be used: no such version, no schema, or rules the API server would refuse. */
export class CrdVersionError extends Error {
  override name = 'CrdVersionError';
  /** The field errors of a CRD the API server would refuse (empty when the version is missing). */
  readonly errors: readonly FieldError[];
  /** The rules' estimated costs that may be listed as contributors to a total over the limit (CompileResult). */
  readonly contributorCosts: ReadonlyMap<string, number>;

  constructor(
    message: string,
    errors: readonly FieldError[] = [],
    contributorCosts: ReadonlyMap<string, number> = new Map(),
  ) {
    super(message);
    this.errors = errors;
    this.contributorCosts = contributorCosts;
  }
}

export interface CompileCrdOptions {
  /** The CEL library environment to build on; share one across CRDs to compile faster. */
  environment?: CelEnvironment;
  /**
   * This exact version passed these checks before (a caller's content-keyed memory): its patterns and
   * defaults are not checked again. The rules still compile, as objects need them.
   */
  accepted?: boolean;
}

const CRD_KIND = 'CustomResourceDefinition.apiextensions.k8s.io';

/**
 * Where the API server reports errors in a version's schema: the internal CRD holds one top-level
 * `spec.validation` when every version has the same schema (the v1 -> internal conversion hoists it).
 */
function schemaPath(versions: CustomResourceDefinition['spec']['versions'], index: number): string {
  const first = versions[0]?.schema?.openAPIV3Schema;
  const shared = versions.every((v) => v.schema?.openAPIV3Schema && jsonEqual(v.schema.openAPIV3Schema, first));
  return shared ? 'spec.validation.openAPIV3Schema' : `spec.versions[${index}].schema.openAPIV3Schema`;
}

/**
 * Compiles one version of a CRD (the storage version when none is named): the structural schema
 * and every x-kubernetes-validations rule. Rules that do not compile throw a CrdVersionError with
 * the message kube-apiserver gives when the CRD itself is written.
 */
export function compileCrdVersion(
  crd: CustomResourceDefinition,
  version?: string,
  options: CompileCrdOptions = {},
): CompiledCrdVersion {
  const versions = crd.spec?.versions ?? [];
  const index = version ? versions.findIndex((v) => v.name === version) : versions.findIndex((v) => v.storage);
  const chosen = versions[index] ?? (version ? undefined : versions[0]);
  if (!chosen) {
    const names = versions.map((v) => v.name).join(', ');
    throw new CrdVersionError(
      version
        ? `CRD ${crd.metadata?.name} has no version ${JSON.stringify(version)} (it has: ${names})`
        : `CRD ${crd.metadata?.name} has no versions`,
    );
  }
  const openAPIV3Schema = chosen.schema?.openAPIV3Schema;
  if (!openAPIV3Schema) {
    throw new CrdVersionError(`CRD ${crd.metadata?.name} version ${chosen.name} has no openAPIV3Schema`);
  }
  const basePath = schemaPath(versions, Math.max(index, 0));
  // Structural-schema errors first: with any of them the API server does not compile the rules.
  const patternErrors = options.accepted ? [] : invalidPatterns(openAPIV3Schema, basePath);
  if (patternErrors.length > 0) {
    throw new CrdVersionError(invalidMessage(CRD_KIND, crd.metadata?.name ?? '', patternErrors), patternErrors);
  }
  // Invalid defaults come next; with any of them the API server compiles no rule and reports
  // only the rules' own field errors (reason, fieldPath, message).
  const defaultErrors = options.accepted ? [] : validateDefaults(openAPIV3Schema, basePath, options.environment);
  const {
    compiled: rules,
    errors: ruleErrors,
    contributorCosts,
  } = compileRules(openAPIV3Schema, {
    basePath,
    compileExpressions: defaultErrors.length === 0,
    deferRules: options.accepted === true,
    ...(options.environment && { environment: options.environment }),
  });
  const errors = [...defaultErrors, ...ruleErrors];
  if (errors.length > 0)
    throw new CrdVersionError(invalidMessage(CRD_KIND, crd.metadata?.name ?? '', errors), errors, contributorCosts);
  return {
    schema: compileSchema(openAPIV3Schema, { subresources: chosen.subresources }),
    rules,
    target: {
      kind: crd.spec.names.kind,
      group: crd.spec.group,
      version: chosen.name,
      namespaced: crd.spec.scope !== 'Cluster',
    },
    deprecationWarnings: deprecationWarnings(crd, chosen.name),
    runRules: (object, oldObject) => {
      if (!rules.root) return { errors: [], warnings: [] };
      const { errors, warnings } = evaluate(rules, object, oldObject);
      return { errors, warnings };
    },
  };
}
