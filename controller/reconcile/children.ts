import { createHash } from 'node:crypto';
import {
  CONTENT_HASH_ANNOTATION,
  DEFAULT_REPLICAS,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SHARD_LABEL,
  type StaticSiteV1,
} from '../../api/index.ts';
import type { ConfigMap, Container, Deployment, KubeObject, Service } from '../../kube/objects.ts';
import { CONFIGMAPS, DEPLOYMENTS, type ResourceType, SERVICES } from '../../kube/resources.ts';
import { setControllerReference } from './ownership.ts';

/** The labels every child carries (besides managed-by): the app, and the site it serves as the instance. */
export const NAME_LABEL = 'app.kubernetes.io/name';
export const INSTANCE_LABEL = 'app.kubernetes.io/instance';
const APP_NAME = 'staticsite';
/** The label selector of the children informers. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/**
 * How a pod serves its site: the ConfigMap's `index.html`, mounted read-only through the `content`
 * volume at nginx's html directory, served on the container port named `http`.
 */
const POD = {
  contentKey: 'index.html',
  container: 'nginx',
  volume: 'content',
  htmlDir: '/usr/share/nginx/html',
  portName: 'http',
} as const;
/** The Service's port: what clients of the site connect to. */
export const HTTP_PORT = 80;
/**
 * The site container: nginx's official unprivileged image, which runs as uid 101 and serves
 * /usr/share/nginx/html on 8080 (a non-root process cannot bind port 80).
 */
export const DEFAULT_SITE_IMAGE = 'nginxinc/nginx-unprivileged:1.28-alpine';
export const DEFAULT_SITE_PORT = 8080;
/**
 * What one nginx serving a ConfigMap needs, so the scheduler can place it and a namespace quota
 * accepts it; memory is limited, CPU is not (a CPU limit only throttles a burst of requests).
 */
export const SITE_RESOURCES = { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } } as const;

export interface ChildOptions {
  image: string;
  /** The port the image serves on; DEFAULT_SITE_PORT when absent. */
  port?: number;
}

/**
 * A kind of child, one entry of the child registry (controller/child-registry.ts): where it lives,
 * how to set our fields on a live (or empty) object, and optionally how to judge drift and which site
 * an event on it concerns. The informer, the event handler, ensure and the RBAC rule all come from it.
 */
export interface ChildKind<T extends KubeObject = KubeObject> {
  type: ResourceType;
  /** The builder: sets only the fields this controller owns, in place, starting from the live object. */
  mutate(object: T, site: StaticSiteV1, options: ChildOptions): void;
  /**
   * Drift: whether `desired` (the live object after `mutate`) must be written. Default: any JSON
   * difference, which is right whenever `mutate` sets only our fields.
   */
  differs?(desired: T, live: T): boolean;
  /** The key of the site an event on this child queues. Default: the controller ownerReference, else the instance label. */
  owner?(object: T): string | undefined;
}

export function selectorLabels(site: StaticSiteV1): Record<string, string> {
  return { [NAME_LABEL]: APP_NAME, [INSTANCE_LABEL]: site.metadata.name ?? '' };
}

export function childLabels(site: StaticSiteV1): Record<string, string> {
  return { ...selectorLabels(site), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
}

/** Every child has the site's name. */
export function childName(site: StaticSiteV1): string {
  return site.metadata.name ?? '';
}

export function contentHash(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/** The object's own labels (not a pod template's): ours, and the site's shard when the controllers are sharded. */
export function mutateMetadata(object: KubeObject, site: StaticSiteV1): void {
  const shard = site.metadata.labels?.[SHARD_LABEL];
  object.metadata.labels = {
    ...(object.metadata.labels ?? {}),
    ...childLabels(site),
    ...(shard !== undefined && { [SHARD_LABEL]: shard }),
  };
  setControllerReference(object, site);
}

function findOrAdd<T extends { name?: string }>(list: T[], name: string, make: () => NoInfer<T>): T {
  let item = list.find((x) => x.name === name);
  if (!item) {
    item = make();
    list.push(item);
  }
  return item;
}

export const configMapChild: ChildKind<ConfigMap> = {
  type: CONFIGMAPS,
  mutate(object, site) {
    mutateMetadata(object, site);
    object.data = { ...(object.data ?? {}), [POD.contentKey]: site.spec.content };
  },
};

function mutateContainer(container: Container, options: ChildOptions): void {
  container.image = options.image;
  const containerPort = options.port ?? DEFAULT_SITE_PORT;
  container.ports ??= [];
  const port = findOrAdd(container.ports, POD.portName, () => ({ name: POD.portName, containerPort }));
  port.containerPort = containerPort;
  container.volumeMounts ??= [];
  const mount = findOrAdd(container.volumeMounts, POD.volume, () => ({
    name: POD.volume,
    mountPath: POD.htmlDir,
  }));
  mount.mountPath = POD.htmlDir;
  mount.readOnly = true;
  // The `restricted` Pod Security Standard: no privilege escalation, every capability dropped
  // (the pod sets non-root and the seccomp profile), so sites run in namespaces that enforce it.
  container.securityContext ??= {};
  container.securityContext.allowPrivilegeEscalation = false;
  container.securityContext.capabilities = { ...container.securityContext.capabilities, drop: ['ALL'] };
  container.resources ??= {};
  container.resources.requests = { ...container.resources.requests, ...SITE_RESOURCES.requests };
  container.resources.limits = { ...container.resources.limits, ...SITE_RESOURCES.limits };
  container.readinessProbe ??= {};
  container.readinessProbe.httpGet ??= {};
  container.readinessProbe.httpGet.path = '/';
  container.readinessProbe.httpGet.port = POD.portName;
}

export const deploymentChild: ChildKind<Deployment> = {
  type: DEPLOYMENTS,
  mutate(object, site, options) {
    mutateMetadata(object, site);
    object.spec ??= {};
    const spec = object.spec;
    spec.replicas = site.spec.replicas ?? DEFAULT_REPLICAS;
    // The selector is immutable: set on create, never touched afterwards.
    spec.selector ??= { matchLabels: selectorLabels(site) };
    spec.template ??= {};
    const template = spec.template;
    template.metadata ??= {};
    const meta = template.metadata;
    meta.labels = { ...(meta.labels ?? {}), ...childLabels(site) };
    meta.annotations = { ...(meta.annotations ?? {}), [CONTENT_HASH_ANNOTATION]: contentHash(site.spec.content) };
    template.spec ??= {};
    const podSpec = template.spec;
    podSpec.securityContext ??= {};
    podSpec.securityContext.runAsNonRoot = true;
    podSpec.securityContext.seccompProfile = { type: 'RuntimeDefault' };
    podSpec.containers ??= [];
    mutateContainer(
      findOrAdd(podSpec.containers, POD.container, () => ({ name: POD.container })),
      options,
    );
    podSpec.volumes ??= [];
    const volume = findOrAdd(podSpec.volumes, POD.volume, () => ({ name: POD.volume }));
    volume.configMap ??= {};
    volume.configMap.name = childName(site);
  },
};

export const serviceChild: ChildKind<Service> = {
  type: SERVICES,
  mutate(object, site) {
    mutateMetadata(object, site);
    object.spec ??= {};
    const spec = object.spec;
    spec.selector = selectorLabels(site);
    spec.ports ??= [];
    const port = findOrAdd(spec.ports, POD.portName, () => ({ name: POD.portName, port: HTTP_PORT }));
    port.port = HTTP_PORT;
    port.targetPort = POD.portName;
  },
};
