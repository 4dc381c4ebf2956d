import { buildCrd, type CustomResourceDefinition, type JSONSchemaProps, SERVED_VERSIONS } from '../../api/index.ts';
import type { CelHook } from '../schema/admit.ts';
import { type CompiledCrdVersion, compileCrdVersion } from '../schema/crd-version.ts';

/** Builds the CEL hook for one version's schema; undefined when the schema has no rules. */
export type CelHookFactory = (openAPIV3Schema: JSONSchemaProps) => CelHook | undefined;

export interface SiteVersion {
  compiled: CompiledCrdVersion;
  celHook: CelHook | undefined;
}

/**
 * The StaticSite schemas the webhook enforces, compiled once at start: always the full schema
 * from api/ (with its CEL rules), whatever CRD variant the cluster runs, so the webhook also
 * enforces the rules when the cluster's CRD carries none.
 */
export class SiteSchemas {
  private readonly versions = new Map<string, SiteVersion>();

  constructor(celHookFor?: CelHookFactory, crd: CustomResourceDefinition = buildCrd()) {
    for (const version of SERVED_VERSIONS) {
      const compiled = compileCrdVersion(crd, version);
      const schema = crd.spec.versions.find((v) => v.name === version)?.schema.openAPIV3Schema;
      this.versions.set(version, { compiled, celHook: schema && celHookFor?.(schema) });
    }
  }

  get(version: string): SiteVersion | undefined {
    return this.versions.get(version);
  }
}
