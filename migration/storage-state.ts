/**
 * What a CustomResourceDefinition says about where its objects are stored: the storage version, and
 * `status.storedVersions`, every version any object may still be stored at in etcd. The API server
 * refuses to drop a version from `spec.versions` while it is listed there.
 */
import type { KubeApi } from '../kube/api-client.ts';
import type { KubeObject } from '../kube/objects.ts';
import { CUSTOM_RESOURCE_DEFINITIONS, type ResourceType } from '../kube/resources.ts';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
}

/** The parts of a CustomResourceDefinition the migration reads. */
export interface StoredCrd extends KubeObject {
  spec: {
    group: string;
    names: { plural: string; kind: string };
    scope: 'Namespaced' | 'Cluster';
    versions: CrdVersion[];
  };
  status?: { storedVersions?: string[] };
}

export interface StorageState {
  crd: string;
  /** metadata.generation: it changes with the spec (a new storage version, a version dropped). */
  generation: number;
  resourceVersion: string;
  storageVersion: string;
  storedVersions: string[];
  servedVersions: string[];
  deprecatedVersions: string[];
  /** The custom resource at its storage version: what the migration lists and writes. */
  resource: ResourceType;
}

export function storageStateOf(crd: StoredCrd): StorageState {
  const storage = crd.spec.versions.find((v) => v.storage);
  if (!storage) throw new Error(`CustomResourceDefinition ${crd.metadata.name} has no storage version`);
  return {
    crd: crd.metadata.name ?? '',
    generation: crd.metadata.generation ?? 0,
    resourceVersion: crd.metadata.resourceVersion ?? '',
    storageVersion: storage.name,
    storedVersions: crd.status?.storedVersions ?? [],
    servedVersions: crd.spec.versions.filter((v) => v.served).map((v) => v.name),
    deprecatedVersions: crd.spec.versions.filter((v) => v.deprecated).map((v) => v.name),
    resource: {
      group: crd.spec.group,
      version: storage.name,
      plural: crd.spec.names.plural,
      kind: crd.spec.names.kind,
      namespaced: crd.spec.scope === 'Namespaced',
    },
  };
}

export async function readStorageState(api: KubeApi, crdName: string, signal?: AbortSignal): Promise<StorageState> {
  const crd = await api.get<StoredCrd>(CUSTOM_RESOURCE_DEFINITIONS, '', crdName, signal ? { signal } : {});
  return storageStateOf(crd);
}

/** The versions other than the storage version that objects may still be stored at. */
export function versionsToRetire(state: StorageState): string[] {
  return state.storedVersions.filter((v) => v !== state.storageVersion);
}
