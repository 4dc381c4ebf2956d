import type { CustomResourceDefinition } from '../../api/index.ts';
import type { AdmitOptions } from './admit.ts';
import { type CompiledSchema, compileSchema } from './compile.ts';

/** A served CRD version compiled for admit(), with what admit() needs to know about the CRD. */
export interface CompiledCrdVersion {
  schema: CompiledSchema;
  /** kind, group, version and scope, ready to spread into admit()'s options. */
  target: Pick<AdmitOptions, 'kind' | 'group' | 'version' | 'namespaced'>;
}

export class CrdVersionError extends Error {
  override name = 'CrdVersionError';
}

/** Compiles one version of a CRD (the storage version when none is named). */
export function compileCrdVersion(crd: CustomResourceDefinition, version?: string): CompiledCrdVersion {
  const versions = crd.spec?.versions ?? [];
  const chosen = version ? versions.find((v) => v.name === version) : (versions.find((v) => v.storage) ?? versions[0]);
  if (!chosen) {
    const names = versions.map((v) => v.name).join(', ');
    throw new CrdVersionError(
      version
        ? `CRD ${crd.metadata?.name} has no version ${JSON.stringify(version)} (it has: ${names})`
        : `CRD ${crd.metadata?.name} has no versions`,
    );
  }
  const openAPIV3Schema = chosen.schema?.openAPIV3Schema;
  if (!openAPIV3Schema)
    throw new CrdVersionError(`CRD ${crd.metadata?.name} version ${chosen.name} has no openAPIV3Schema`);
  return {
    schema: compileSchema(openAPIV3Schema, { subresources: chosen.subresources }),
    target: {
      kind: crd.spec.names.kind,
      group: crd.spec.group,
      version: chosen.name,
      namespaced: crd.spec.scope !== 'Cluster',
    },
  };
}
