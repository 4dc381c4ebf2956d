/** metav1.ObjectMeta: the fields this project reads and writes. Unknown keys pass through. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

/** metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Any Kubernetes object as JSON: the controller keeps every field it does not know. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** metav1.Status, the body of every API error and of a watch ERROR event. */
export interface KubeStatus {
  kind: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: Record<string, unknown>;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject | KubeStatus;
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string; localhostProfile?: string };
  [key: string]: unknown;
}

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  [key: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  readinessProbe?: {
    httpGet?: { path?: string; port?: number | string; scheme?: string };
    periodSeconds?: number;
    [key: string]: unknown;
  };
  securityContext?: SecurityContext;
  resources?: ResourceRequirements;
  [key: string]: unknown;
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  spec?: {
    containers?: Container[];
    securityContext?: SecurityContext;
    volumes?: Array<{ name: string; configMap?: { name?: string; [key: string]: unknown }; [key: string]: unknown }>;
    [key: string]: unknown;
  };
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export interface DeploymentCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Deployment extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template?: PodTemplate;
    [key: string]: unknown;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: DeploymentCondition[];
  };
}

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
  [key: string]: unknown;
}

export interface Service extends KubeObject {
  spec?: {
    selector?: Record<string, string>;
    ports?: ServicePort[];
    [key: string]: unknown;
  };
}

/** A Gateway API parentReference (gateway.networking.k8s.io/v1). */
export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  [key: string]: unknown;
}

/** gateway.networking.k8s.io/v1 HTTPRoute: the fields this project reads and writes. */
export interface HTTPRoute extends KubeObject {
  spec?: {
    parentRefs?: ParentReference[];
    hostnames?: string[];
    rules?: Array<Record<string, unknown>>;
    [key: string]: unknown;
  };
  status?: {
    parents?: Array<{
      parentRef: ParentReference;
      controllerName?: string;
      conditions?: Array<{
        type: string;
        status: string;
        reason?: string;
        message?: string;
        observedGeneration?: number;
      }>;
    }>;
  };
}

/** networking.k8s.io/v1 Ingress: the fields this project reads and writes. */
export interface Ingress extends KubeObject {
  spec?: {
    ingressClassName?: string;
    rules?: Array<Record<string, unknown>>;
    [key: string]: unknown;
  };
  status?: {
    loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> };
  };
}

/** gateway.networking.k8s.io/v1 Gateway: what this project reads of it, the addresses it serves at. */
export interface Gateway extends KubeObject {
  status?: {
    addresses?: Array<{ type?: string; value: string }>;
  };
}

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export function objectKey(object: { metadata: ObjectMeta }): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : (name ?? '');
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
