import { ApiError } from './api-error.ts';
import type { KubeList, KubeObject, KubeStatus } from './objects.ts';
import { JSON_PATCH_CONTENT_TYPE, type JsonPatchOperation, MERGE_PATCH_CONTENT_TYPE } from './patch-types.ts';
import { collectionPath, objectPath, type ResourceType } from './resources.ts';
import type { KubeTransport, Query, TransportStream } from './transport.ts';

export interface CallOptions {
  signal?: AbortSignal;
  unthrottled?: boolean;
}

/**
 * The API calls the controller, the webhook's informer and the cert bootstrapper make, as JSON.
 * Every non-2xx answer becomes an ApiError carrying the server's Status, so callers branch on codes
 * and reasons, never on message text.
 */
export class KubeApi {
  readonly transport: KubeTransport;

  constructor(transport: KubeTransport) {
    this.transport = transport;
  }

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    query?: Query,
    options: CallOptions & { contentType?: string } = {},
  ): Promise<T> {
    const res = await this.transport.request(method, path, {
      body,
      query,
      signal: options.signal,
      unthrottled: options.unthrottled,
      contentType: options.contentType,
    });
    if (res.status < 200 || res.status > 299) {
      throw new ApiError(method, path, res.status, res.body as Partial<KubeStatus> | undefined, res.text);
    }
    return res.body as T;
  }

  get<T extends KubeObject>(type: ResourceType, namespace: string, name: string, options?: CallOptions): Promise<T> {
    return this.call<T>('GET', objectPath(type, namespace, name), undefined, undefined, options);
  }

  list<T extends KubeObject>(type: ResourceType, namespace: string, query: Query, options?: CallOptions) {
    return this.call<KubeList<T>>('GET', collectionPath(type, namespace), undefined, query, options);
  }

  create<T extends KubeObject>(type: ResourceType, namespace: string, object: T, options?: CallOptions): Promise<T> {
    return this.call<T>('POST', collectionPath(type, namespace), object, undefined, options);
  }

  /** An ordinary update: PUT with the object's resourceVersion, so a concurrent change is a 409. */
  update<T extends KubeObject>(type: ResourceType, object: T, options?: CallOptions): Promise<T> {
    const { namespace = '', name = '' } = object.metadata;
    return this.call<T>('PUT', objectPath(type, namespace, name), object, undefined, options);
  }

  updateStatus<T extends KubeObject>(type: ResourceType, object: T, options?: CallOptions): Promise<T> {
    const { namespace = '', name = '' } = object.metadata;
    return this.call<T>('PUT', objectPath(type, namespace, name, 'status'), object, undefined, options);
  }

  mergePatch<T extends KubeObject>(
    type: ResourceType,
    namespace: string,
    name: string,
    patch: unknown,
    options?: CallOptions,
  ): Promise<T> {
    return this.call<T>('PATCH', objectPath(type, namespace, name), patch, undefined, {
      ...options,
      contentType: MERGE_PATCH_CONTENT_TYPE,
    });
  }

  jsonPatch<T extends KubeObject>(
    type: ResourceType,
    namespace: string,
    name: string,
    operations: JsonPatchOperation[],
    options?: CallOptions,
  ): Promise<T> {
    return this.call<T>('PATCH', objectPath(type, namespace, name), operations, undefined, {
      ...options,
      contentType: JSON_PATCH_CONTENT_TYPE,
    });
  }

  /** A POST to a path of no resource type (TokenReview, SubjectAccessReview and the like). */
  post<T>(path: string, body: unknown, options?: CallOptions & { query?: Query }): Promise<T> {
    return this.call<T>('POST', path, body, options?.query, options);
  }

  watch(type: ResourceType, namespace: string, query: Query, signal: AbortSignal): Promise<TransportStream> {
    return this.transport.stream(collectionPath(type, namespace), { ...query, watch: 1 }, signal);
  }
}
