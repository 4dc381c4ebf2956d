import { API_VERSION_V1, KIND, type OwnerReference } from '../../api/index.ts';
import type { KubeObject } from '../../kube/objects.ts';

/** The site a child belongs to, as much as an ownerReference needs. */
export interface OwnerSite {
  metadata: { name?: string; namespace?: string; uid?: string };
}

export function controllerReference(site: OwnerSite): OwnerReference {
  return {
    apiVersion: API_VERSION_V1,
    kind: KIND,
    name: site.metadata.name ?? '',
    uid: site.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The ownerReference marked `controller: true`, if any. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

export function isStaticSiteReference(ref: OwnerReference): boolean {
  return ref.kind === KIND && ref.apiVersion.split('/')[0] === API_VERSION_V1.split('/')[0];
}

/** True when `object`'s controller is exactly this site (same uid). */
export function isControlledBy(object: KubeObject, site: OwnerSite): boolean {
  const ref = controllerOf(object);
  return ref !== undefined && ref.uid === site.metadata.uid;
}

/**
 * Puts our controller reference on `object` (in place), keeping every other reference. Only called
 * on objects that have no controller or are already ours: adoption of a foreign object never happens.
 */
export function setControllerReference(object: KubeObject, site: OwnerSite): void {
  const desired = controllerReference(site);
  const refs = object.metadata.ownerReferences ?? [];
  const existing = refs.find((ref) => ref.uid === desired.uid);
  if (existing) Object.assign(existing, desired);
  else refs.push(desired);
  object.metadata.ownerReferences = refs;
}

/** The namespace/name of the StaticSite controlling a child, from its controller ownerReference. */
export function ownerKey(object: KubeObject): string | undefined {
  const ref = controllerOf(object);
  if (!ref || !isStaticSiteReference(ref) || !object.metadata.namespace) return undefined;
  return `${object.metadata.namespace}/${ref.name}`;
}
