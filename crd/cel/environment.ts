/**
 * The Kubernetes CEL environment on @marcbachmann/cel-js: the base library set, object types registered from
 * the schema's declaration types, and per-node environments binding `self` and `oldSelf`.
 * Source of the library set: k8s.io/apiserver@v0.37.2/pkg/cel/environment/base.go.
 */
import { Environment } from '@marcbachmann/cel-js';
import type { DeclType, ObjectDeclType } from './decl-types.ts';
import { celEquals } from './library/compare.ts';
import { registerKubernetesLibraries } from './library/index.ts';
import type { RegexCache } from './library/re2.ts';
import type { ObjectClass } from './values.ts';

/** Object declaration types registered in one environment, with their CEL type names and runtime classes. */
export class ObjectTypeTable {
  private readonly names = new Map<ObjectDeclType, string>();
  private readonly classes = new Map<ObjectDeclType, ObjectClass>();

  /** The CEL type name of a declaration type (registering object types on first use). */
  typeName(env: Environment, type: DeclType): string {
    switch (type.kind) {
      case 'timestamp':
        return 'google.protobuf.Timestamp';
      case 'duration':
        return 'google.protobuf.Duration';
      case 'list':
        return `list<${this.typeName(env, type.elem)}>`;
      case 'map':
        return `map<string, ${this.typeName(env, type.elem)}>`;
      case 'object':
        return this.register(env, type);
      default:
        return type.kind;
    }
  }

  classOf(type: ObjectDeclType): ObjectClass {
    const cls = this.classes.get(type);
    if (!cls) throw new Error('object type was not registered in this environment');
    return cls;
  }

  private register(env: Environment, type: ObjectDeclType): string {
    const known = this.names.get(type);
    if (known) return known;
    const fields: Record<string, string> = {};
    for (const [celName, field] of type.fields) fields[celName] = this.typeName(env, field.type);
    const name = `Object${this.names.size}`;
    const cls = { [name]: class extends Map<string, unknown> {} }[name] as ObjectClass;
    this.names.set(type, name);
    this.classes.set(type, cls);
    env.registerType(name, { ctor: cls, fields });
    env.registerOperator(`${name} == ${name}`, (a: unknown, b: unknown) => celEquals(a, b));
    // An object may be compared with null (cel-go: null meets any struct type); it never equals it.
    env.registerOperator(`${name} == null`, () => false);
    return name;
  }
}

export const ENVIRONMENT_OPTIONS = {
  enableOptionalTypes: true,
  // checked by findHeterogeneousLiterals, which exempts format() arguments as cel-go does
  homogeneousAggregateLiterals: false,
  unlistedVariablesAreDyn: false,
} as const;

/** A fresh environment with every Kubernetes library registered. */
export function baseEnvironment(regexCache: RegexCache): Environment {
  const env = new Environment(ENVIRONMENT_OPTIONS);
  registerKubernetesLibraries(env, regexCache);
  return env;
}

/**
 * The Kubernetes CEL library environment (building it takes ~10 ms): create one per process and pass it to every
 * compileRules() call. Compiling clones it, which freezes it; the regex cache is its only mutable part.
 */
export interface CelEnvironment {
  readonly env: Environment;
  readonly regexCache: RegexCache;
}

export function createCelEnvironment(): CelEnvironment {
  const regexCache: RegexCache = new Map();
  return { env: baseEnvironment(regexCache), regexCache };
}
