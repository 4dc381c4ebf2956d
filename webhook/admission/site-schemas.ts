import { buildCrd, type CustomResourceDefinition, SERVED_VERSIONS } from '../../api/index.ts';
import { type CompiledCrdVersion, compileCrdVersion } from '../../crd/index.ts';

/**
 * The StaticSite versions the webhook enforces, compiled once at start (schema and CEL rules):
 * always the full CRD from api/, whatever CRD variant the cluster runs, so the webhook also
 * enforces the rules when the cluster's CRD carries none.
 */
export class SiteSchemas {
  private readonly versions = new Map<string, CompiledCrdVersion>();

  constructor(crd: CustomResourceDefinition = buildCrd()) {
    for (const version of SERVED_VERSIONS) this.versions.set(version, compileCrdVersion(crd, version));
  }

  get(version: string): CompiledCrdVersion | undefined {
    return this.versions.get(version);
  }
}
