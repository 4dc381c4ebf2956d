import { createHash } from 'node:crypto';
import {
  CONTENT_HASH_ANNOTATION,
  DEFAULT_REPLICAS,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SHARD_LABEL,
  type StaticSiteV1,
} from '../../api/index.ts';
import type { ConfigMap, Container, Deployment, Gateway, KubeObject, Service } from '../../kube/objects.ts';
import { CONFIGMAPS, DEPLOYMENTS, type ResourceType, SERVICES } from '../../kube/resources.ts';
import type { ServedVia } from '../records/record-store.ts';
import { setControllerReference } from './ownership.ts';
import { deploymentReadiness, type Readiness } from './status.ts';

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
 * What a child kind's readiness hook says of its site (ChildKind.readiness). The reconciler asks every
 * kind of the registry, in its order, and Ready shows the first of: a problem of a step of the pass
 * (a conflicting child, a claim, the record); a child not ready that is `unreachable`; any other child
 * not ready; else Ready=True with the reason and message of the first ready child that gives them.
 */
export type ChildReadiness =
  | {
      ready: true;
      /** Ready=True's reason and message, when this child has the say (the Deployment: `Available`). */
      reason?: string;
      message?: string;
      /** What serves the site by its hostname, with its addresses: the external record points there. */
      via?: ServedVia;
      /** `status.readyReplicas` (the first child to give it; 0 when none does). */
      readyReplicas?: number;
    }
  | {
      ready: false;
      /** Ready=False's reason and message (and Progressing's or Degraded's). */
      reason: string;
      message: string;
      /** Under way (Progressing=True), rather than stopped by something (Degraded=True). */
      progressing?: boolean;
      /**
       * The site's hostname does not reach it through this child yet (a route no Gateway accepted, an
       * Ingress without an address): status shows no URL, no external record is published, and this
       * reason goes before those of children that are not ready for other reasons (a rollout).
       */
      unreachable?: boolean;
      readyReplicas?: number;
    };

/** What a readiness hook may read besides its child and site. */
export interface ReadinessContext {
  /** With --gateway and the Gateway API served: the Gateway's informer cache (its addresses). */
  gateways?: { get(key: string): Gateway | undefined };
}

/** A Readiness that is not True (a sentence of deploymentReadiness, routeReadiness, ...) as a hook's answer. */
export function notReady(readiness: Readiness, options: { unreachable?: boolean } = {}): ChildReadiness {
  const { reason, message, progressing } = readiness;
  return {
    ready: false,
    reason,
    message,
    ...(progressing && { progressing }),
    ...(options.unreachable && { unreachable: true }),
  };
}

/**
 * A kind of child, one entry of the child registry (controller/child-registry.ts): where it lives,
 * how to set our fields on a live (or empty) object, and optionally how to judge drift, which site
 * an event on it concerns and whether it keeps the site from Ready. The informer, the event handler,
 * ensure, the RBAC rule and the child's part in Ready, `status.url` and the record all come from it.
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
  /**
   * Readiness: what this child says of its site's Ready, asked on every pass once the children are
   * ensured, with the child as written or found (undefined when there is none: not created yet,
   * another controller's, or a failed write). Default: nothing, the child never holds Ready back.
   */
  readiness?(child: T | undefined, site: StaticSiteV1, context: ReadinessContext): ChildReadiness;
  /**
   * True when the cluster does not serve this kind's API (found at start-up: `--gateway` without the
   * Gateway API). Such an entry gets no informer, no ensure and no RBAC; only its readiness hook is
   * asked, with no child, so every site says why. Default: false.
   */
  unserved?: boolean;
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
  // Ready follows the rollout as `kubectl rollout status` reads it; status.readyReplicas is the Deployment's.
  readiness(deployment) {
    if (!deployment) {
      const message = 'Waiting for the deployment to be created...';
      return { ready: false, reason: 'RollingOut', message, progressing: true, readyReplicas: 0 };
    }
    const rollout = deploymentReadiness(deployment);
    const readyReplicas = deployment.status?.readyReplicas ?? 0;
    if (rollout.status !== 'True') return { ...notReady(rollout), readyReplicas };
    return { ready: true, reason: rollout.reason, message: rollout.message, readyReplicas };
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
