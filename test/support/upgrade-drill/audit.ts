/**
 * The controller replicas' API traffic as the real API server recorded it in its audit log: the
 * drill's pods talk to the API server directly, so no recording proxy sits in their path. One
 * replica is one pod (the bound token's pod name); its identity is the holder it wrote into the Lease.
 */
import { readFile } from 'node:fs/promises';
import { parseApiPath } from '../history/api-path.ts';
import type { History, RecordedRequest, ReplicaHistory } from '../history/types.ts';

/** The controller's service account, as the API server authenticates its pods. */
export const CONTROLLER_USER = 'system:serviceaccount:staticsite-system:staticsite-controller';

/** Every write of the controller's pods, with the request body of Lease writes (their holder). */
export const CONTROLLER_AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [
    {
      level: 'Request',
      users: [CONTROLLER_USER],
      verbs: ['create', 'update', 'patch'],
      resources: [{ group: 'coordination.k8s.io', resources: ['leases'] }],
    },
    { level: 'Metadata', users: [CONTROLLER_USER], verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] },
    { level: 'None' },
  ],
};

interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; extra?: Record<string, string[]> };
  sourceIPs?: string[];
  objectRef?: { name?: string };
  responseStatus?: { code?: number };
  requestObject?: { spec?: { holderIdentity?: string; leaseDurationSeconds?: number } };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

const METHOD: Record<string, string> = {
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETE',
};

function podOf(event: AuditEvent): string {
  const extra = event.user.extra ?? {};
  return (
    extra['authentication.kubernetes.io/pod-name']?.[0] ??
    extra['authentication.kubernetes.io/credential-id']?.[0] ??
    event.sourceIPs?.[0] ??
    'unknown'
  );
}

function recorded(event: AuditEvent): RecordedRequest {
  const url = new URL(event.requestURI, 'https://apiserver');
  const path = parseApiPath(url.pathname);
  const lease = path?.group === 'coordination.k8s.io' && path.resource === 'leases';
  const spec = event.requestObject?.spec;
  return {
    method: METHOD[event.verb] ?? event.verb.toUpperCase(),
    path: url.pathname,
    status: event.responseStatus?.code ?? 0,
    at: Date.parse(event.requestReceivedTimestamp),
    answeredAt: Date.parse(event.stageTimestamp),
    ...(event.objectRef?.name !== undefined && { name: event.objectRef.name }),
    ...(lease && spec && { holder: spec.holderIdentity ?? '', leaseName: event.objectRef?.name }),
    ...(lease && spec?.leaseDurationSeconds !== undefined && { leaseDurationSeconds: spec.leaseDurationSeconds }),
    ...(url.searchParams.has('dryRun') && { dryRun: true }),
  };
}

/**
 * The controller pods' requests from the audit log at `path`: Lease writes from the whole log (who
 * led before the drill began matters), every other write from `since` on.
 */
export async function controllerHistory(path: string, since: number): Promise<History> {
  const byPod = new Map<string, RecordedRequest[]>();
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (line === '') continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage !== 'ResponseComplete' || event.user.username !== CONTROLLER_USER) continue;
    const request = recorded(event);
    if (request.holder === undefined && request.at < since) continue;
    const pod = podOf(event);
    const requests = byPod.get(pod) ?? [];
    requests.push(request);
    byPod.set(pod, requests);
  }
  const replicas: ReplicaHistory[] = [...byPod].map(([pod, requests]) => ({
    // A replica only ever names itself as the holder (or '' when it releases).
    identity: requests.find((r) => r.holder)?.holder ?? pod,
    requests,
  }));
  return { replicas };
}
