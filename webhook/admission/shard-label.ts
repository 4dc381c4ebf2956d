import { GROUP, PLURAL, SHARD_LABEL } from '../../api/constants.ts';
import { isJsonObject } from '../../crd/index.ts';
import type { JsonPatchOperation } from '../../kube/patch-types.ts';
import type { AdmissionRequest, AdmissionResponse } from './review.ts';

/** Where the sharded controllers' ring is read (their shard Leases); absent: sites are not labelled. */
export interface ShardAssigner {
  /** The shard for a site key (namespace/name); none while no shard is live. */
  shardFor(key: string): string | undefined;
}

/** A StaticSite admitted without a shard label: what it takes to label it. */
export interface ShardRequest {
  key: string;
  /** Whether the object has `metadata.labels` at all (the patch adds the map, or a key in it). */
  hasLabels: boolean;
}

/**
 * The shard request of a mutating review: a StaticSite written (CREATE or UPDATE of the resource,
 * not a subresource) whose name is known and that has no shard label. A generateName CREATE has no
 * name yet, so it is left to the sharder; so is a site whose shard label was set by its writer.
 */
export function shardRequestOf(request: AdmissionRequest, response: AdmissionResponse): ShardRequest | undefined {
  if (!response.allowed || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return undefined;
  const { resource, subResource } = request;
  if (resource?.group !== GROUP || resource.resource !== PLURAL || subResource) return undefined;
  const object = request.object;
  if (!isJsonObject(object) || !isJsonObject(object.metadata)) return undefined;
  const metadata = object.metadata;
  const name = request.name || (typeof metadata.name === 'string' ? metadata.name : '');
  const namespace = request.namespace ?? (typeof metadata.namespace === 'string' ? metadata.namespace : '');
  if (!name || !namespace) return undefined;
  const labels = metadata.labels;
  if (isJsonObject(labels) && typeof labels[SHARD_LABEL] === 'string') return undefined;
  return { key: `${namespace}/${name}`, hasLabels: isJsonObject(labels) };
}

/** `response` with the shard label added to its JSONPatch (or as its patch). */
export function withShardLabel(response: AdmissionResponse, request: ShardRequest, shard: string): AdmissionResponse {
  const patch: JsonPatchOperation[] = response.patch
    ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonPatchOperation[])
    : [];
  patch.push(
    request.hasLabels
      ? { op: 'add', path: `/metadata/labels/${SHARD_LABEL.replaceAll('~', '~0').replaceAll('/', '~1')}`, value: shard }
      : { op: 'add', path: '/metadata/labels', value: { [SHARD_LABEL]: shard } },
  );
  return {
    ...response,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
  };
}
