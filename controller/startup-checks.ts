import { STATICSITES } from '../api/index.ts';
import { type Clock, sleep } from '../clock/clock.ts';
import type { KubeApi } from '../kube/api-client.ts';
import { ApiError, errorMessage, isNotFound } from '../kube/api-error.ts';
import { apiVersionOf, LEASES, type ResourceType, SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS } from '../kube/resources.ts';
import type { ChildRegistry } from './child-registry.ts';
import { LEASE_NAME } from './manager.ts';
import type { Logger } from './observability/logger.ts';
import { gatewayReadPermissions, type Permission, watchedNamespacePermissions } from './rbac.ts';

export type { Permission } from './rbac.ts';

/** What the controller needs of the cluster before it can make a site Ready. */
export interface StartupNeeds {
  /** The namespace it watches; '' for all. */
  namespace: string;
  /** Where the hostname claims (Leases) live. */
  claimsNamespace: string;
  /** Where the leader-election Lease lives, when leader election is on. */
  leaderElectionNamespace?: string;
  /** Create the claims namespace when it is missing, instead of failing. */
  createClaimsNamespace: boolean;
  /** /metrics is authorized through the API server: TokenReviews and SubjectAccessReviews. */
  secureMetrics?: boolean;
  /** The child kinds it owns; default the registry's (CHILDREN). */
  children?: ChildRegistry;
  /** With --gateway and the Gateway API served: the namespace of the Gateway it reads. */
  gatewayNamespace?: string;
  /** --sharded: this shard's Lease name and its namespace (where every shard Lease lives). */
  shardLease?: { namespace: string; name: string };
}

/** Thrown when a start-up dependency is missing: its message names each problem and its fix. */
export class StartupCheckError extends Error {
  override name = 'StartupCheckError';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`not started: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

/** Every call the controller makes, by permission (manifests/controller/ grants them). */
export function requiredPermissions(needs: StartupNeeds): Permission[] {
  const permissions: Permission[] = [
    ...watchedNamespacePermissions(needs.namespace, needs.children),
    ...['create', 'get', 'list', 'watch', 'delete'].map((verb) => ({
      verb,
      type: LEASES,
      namespace: needs.claimsNamespace,
    })),
  ];
  if (needs.gatewayNamespace !== undefined) permissions.push(...gatewayReadPermissions(needs.gatewayNamespace));
  if (needs.secureMetrics) {
    for (const type of [TOKEN_REVIEWS, SUBJECT_ACCESS_REVIEWS])
      permissions.push({ verb: 'create', type, namespace: '' });
  }
  const election = needs.leaderElectionNamespace;
  if (election !== undefined) {
    permissions.push({ verb: 'create', type: LEASES, namespace: election });
    for (const verb of ['get', 'update'])
      permissions.push({ verb, type: LEASES, name: LEASE_NAME, namespace: election });
  }
  const shard = needs.shardLease;
  if (shard !== undefined) {
    // Its own Lease (renewed), and every shard's (the sharder's ring, while it leads).
    for (const verb of ['get', 'update'])
      permissions.push({ verb, type: LEASES, name: shard.name, namespace: shard.namespace });
    for (const verb of ['list', 'watch']) permissions.push({ verb, type: LEASES, namespace: shard.namespace });
  }
  return permissions;
}

function describePermission(p: Permission): string {
  const resource = `${p.type.plural}${p.subresource ? `/${p.subresource}` : ''}${p.type.group ? `.${p.type.group}` : ''}`;
  return `${p.verb} ${resource}${p.name ? ` ${p.name}` : ''} in ${p.namespace ? `namespace ${p.namespace}` : 'all namespaces'}`;
}

function post(api: KubeApi, path: string, body: unknown, query?: Record<string, string>): Promise<unknown> {
  return api.post(path, body, { query });
}

/** Whether the API server serves `type` (its CRD installed and established), as discovery shows it. */
export async function isServed(api: KubeApi, type: ResourceType): Promise<boolean> {
  const path = `/apis/${type.group}/${type.version}`;
  const res = await api.transport.request('GET', path);
  const served = (res.body as { resources?: Array<{ name: string }> } | undefined)?.resources ?? [];
  if (res.status === 200) return served.some((r) => r.name === type.plural);
  if (res.status === 404) return false;
  throw new ApiError('GET', path, { code: res.status, text: res.text });
}

/** The StaticSite API served, or what to do about it. */
async function crdProblem(api: KubeApi): Promise<string | undefined> {
  if (await isServed(api, STATICSITES)) return undefined;
  return `the StaticSite API (${apiVersionOf(STATICSITES)}, ${STATICSITES.plural}) is not served: install the CRD first (kubectl apply -k manifests/crds/full)`;
}

/** Permissions the identity lacks, each asked of the API server by a SelfSubjectAccessReview. */
async function missingPermissions(api: KubeApi, permissions: Permission[]): Promise<Permission[]> {
  const answers = await Promise.all(
    permissions.map(async (p) => {
      const review = (await post(api, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: {
            namespace: p.namespace,
            verb: p.verb,
            group: p.type.group,
            resource: p.type.plural,
            subresource: p.subresource ?? '',
            name: p.name ?? '',
          },
        },
      })) as { status?: { allowed?: boolean } };
      return review.status?.allowed === true ? undefined : p;
    }),
  );
  return answers.filter((p): p is Permission => p !== undefined);
}

/**
 * Whether a claim can be made in the claims namespace: a dry-run create of a claim Lease (nothing is
 * stored), so the answer is the one a real claim would get; a missing namespace is a 404.
 */
async function claimsNamespaceMissing(api: KubeApi, namespace: string): Promise<boolean> {
  const path = `/apis/${LEASES.group}/${LEASES.version}/namespaces/${encodeURIComponent(namespace)}/${LEASES.plural}`;
  try {
    await post(
      api,
      path,
      { apiVersion: apiVersionOf(LEASES), kind: LEASES.kind, metadata: { name: 'staticsite-startup-check' } },
      { dryRun: 'All' },
    );
    return false;
  } catch (error) {
    if (isNotFound(error)) return true;
    // AlreadyExists, or a refusal the permission check reports: the namespace is there.
    if (error instanceof ApiError && (error.code === 409 || error.code === 403)) return false;
    throw error;
  }
}

/**
 * The controller's start-up dependencies, checked before it reports ready: the CRD, every permission
 * it uses, and the claims namespace (created with `createClaimsNamespace`). Throws a
 * StartupCheckError naming every problem and its fix; API failures propagate as they are.
 */
export async function checkStartupNeeds(api: KubeApi, needs: StartupNeeds): Promise<void> {
  const problems: string[] = [];
  const crd = await crdProblem(api);
  if (crd) problems.push(crd);
  if (await claimsNamespaceMissing(api, needs.claimsNamespace)) {
    if (needs.createClaimsNamespace) {
      await post(api, '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: needs.claimsNamespace },
      }).catch((error: unknown) => {
        if (!(error instanceof ApiError && error.code === 409)) throw error;
      });
    } else {
      problems.push(
        `the hostname claims namespace "${needs.claimsNamespace}" does not exist: create it (kubectl create namespace ${needs.claimsNamespace}), name an existing one with --claims-namespace, or pass --create-claims-namespace`,
      );
    }
  }
  const missing = await missingPermissions(api, requiredPermissions(needs));
  if (missing.length > 0) {
    problems.push(
      `this identity may not ${missing.map(describePermission).join(', ')}: grant the roles in manifests/controller/${needs.secureMetrics ? ' and manifests/metrics-auth/metrics-auth-rbac.yaml' : ''}${needs.shardLease ? ' and manifests/overlays/sharded/shard-leases-rbac.yaml' : ''}, or run with a kubeconfig that has them`,
    );
  }
  if (problems.length > 0) throw new StartupCheckError(problems);
}

/**
 * Runs `check` until it gives an answer: an API server that cannot be reached (no connection, a 5xx,
 * a 429) is waited for, 1 s doubling to 30 s, each failure logged; a definite answer (the checks'
 * problems, a 4xx) is returned or thrown at once.
 */
export async function retryUnreachable<T>(check: () => Promise<T>, deps: { clock: Clock; logger: Logger }): Promise<T> {
  for (let delay = 1_000; ; delay = Math.min(delay * 2, 30_000)) {
    try {
      return await check();
    } catch (error) {
      const definite =
        error instanceof StartupCheckError || (error instanceof ApiError && error.code < 500 && error.code !== 429);
      if (definite) throw error;
      deps.logger.warn(
        { err: errorMessage(error), retryInMs: delay },
        'start-up checks: the API server cannot be reached',
      );
      await sleep(deps.clock, delay);
    }
  }
}
