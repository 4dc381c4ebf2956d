import { ApiError } from './api-error.ts';
import type { KubeList, KubeObject, KubeStatus } from './objects.ts';
import { JSON_PATCH_CONTENT_TYPE, type JsonPatchOperation, MERGE_PATCH_CONTENT_TYPE } from './patch-types.ts';
import { collectionPath, objectPath, type ResourceType } from './resources.ts';
import type { KubeTransport, Query, TransportStream } from './transport.ts';

export interface CallOptions {
  signal?: AbortSignal;
  unthrottled?: boolean;
}

/** What a call sends besides its method and path. */
interface CallRequest extends CallOptions {
  body?: unknown;
  query?: Query;
  contentType?: string;
}

/** A merge patch (RFC 7386) and the options of its call. */
export interface MergePatchRequest extends CallOptions {
  patch: unknown;
  /** `status` to patch the status subresource. */
  subresource?: string;
}

/** JSON Patch operations (RFC 6902) and the options of their call. */
export interface JsonPatchRequest extends CallOptions {
  operations: JsonPatchOperation[];
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

  private async call<T>(method: string, path: string, request: CallRequest = {}): Promise<T> {
    const res = await this.transport.request(method, path, {
      body: request.body,
      query: request.query,
      signal: request.signal,
      unthrottled: request.unthrottled,
      contentType: request.contentType,
    });
    if (res.status < 200 || res.status > 299) {
      throw new ApiError(method, path, {
        code: res.status,
        status: res.body as Partial<KubeStatus> | undefined,
        text: res.text,
      });
    }
    return res.body as T;
  }

  get<T extends KubeObject>(type: ResourceType, namespace: string, name: string, options?: CallOptions): Promise<T> {
    return this.call<T>('GET', objectPath(type, namespace, name), options);
  }

  list<T extends KubeObject>(type: ResourceType, namespace: string, query: Query, options?: CallOptions) {
    return this.call<KubeList<T>>('GET', collectionPath(type, namespace), { ...options, query });
  }

  create<T extends KubeObject>(type: ResourceType, namespace: string, object: T, options?: CallOptions): Promise<T> {
    return this.call<T>('POST', collectionPath(type, namespace), { ...options, body: object });
  }

  /** An ordinary update: PUT with the object's resourceVersion, so a concurrent change is a 409. */
  update<T extends KubeObject>(type: ResourceType, object: T, options?: CallOptions): Promise<T> {
    const { namespace = '', name = '' } = object.metadata;
    return this.call<T>('PUT', objectPath(type, namespace, name), { ...options, body: object });
  }

  updateStatus<T extends KubeObject>(type: ResourceType, object: T, options?: CallOptions): Promise<T> {
    const { namespace = '', name = '' } = object.metadata;
    return this.call<T>('PUT', objectPath(type, namespace, name, 'status'), { ...options, body: object });
  }

  mergePatch<T extends KubeObject>(
    type: ResourceType,
    namespace: string,
    name: string,
    request: MergePatchRequest,
  ): Promise<T> {
    const { patch, subresource, ...options } = request;
    return this.call<T>('PATCH', objectPath(type, namespace, name, subresource), {
      ...options,
      body: patch,
      contentType: MERGE_PATCH_CONTENT_TYPE,
    });
  }

  jsonPatch<T extends KubeObject>(
    type: ResourceType,
    namespace: string,
    name: string,
    request: JsonPatchRequest,
  ): Promise<T> {
    const { operations, ...options } = request;
    return this.call<T>('PATCH', objectPath(type, namespace, name), {
      ...options,
      body: operations,
      contentType: JSON_PATCH_CONTENT_TYPE,
    });
  }

  /** A POST to a path of no resource type (TokenReview, SubjectAccessReview and the like). */
  post<T>(path: string, body: unknown, options?: CallOptions & { query?: Query }): Promise<T> {
    return this.call<T>('POST', path, { ...options, body });
  }

  watch(type: ResourceType, namespace: string, query: Query, signal: AbortSignal): Promise<TransportStream> {
    return this.transport.stream(collectionPath(type, namespace), { ...query, watch: 1 }, signal);
  }
}
