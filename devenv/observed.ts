/**
 * A GET of a process's probe or metrics URL, as a scraper or a kubelet makes it: over HTTPS the
 * process's self-signed certificate is accepted (secure metrics make their own, as
 * controller-runtime's do; a scraper trusts the token exchange, not the certificate), with a bearer
 * token when one is given.
 */

import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { packageRoot } from '../cli/package-root.ts';
import type { ControlPlane } from './controlplane.ts';

export interface Observed {
  status: number;
  text: string;
}

export function observe(url: string, token?: string): Promise<Observed> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'GET',
        rejectUnauthorized: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** The status of a GET, or 0 when nothing answers. */
export async function observedStatus(url: string, token?: string): Promise<number> {
  return (await observe(url, token).catch(() => ({ status: 0, text: '' }))).status;
}

const SCRAPER = { namespace: 'kube-system', name: 'staticsite-metrics-scraper' };

/**
 * A token of a service account bound to the rules of the manifests' staticsite-metrics-reader
 * ClusterRole (manifests/metrics-auth), as Prometheus would present one. The role is created under
 * a name of its own, so a test cluster that later installs the manifests or the chart finds no
 * object of theirs already there.
 */
export async function metricsReaderToken(cp: ControlPlane): Promise<string> {
  const file = readFileSync(join(packageRoot(), 'manifests', 'metrics-auth', 'metrics-auth-rbac.yaml'), 'utf8');
  const role = (loadAll(file) as Array<{ kind: string; metadata: { name: string } }>).find(
    (o) => o.kind === 'ClusterRole' && o.metadata.name === 'staticsite-metrics-reader',
  );
  if (!role) throw new Error('manifests/metrics-auth has no staticsite-metrics-reader ClusterRole');
  role.metadata = { name: `${SCRAPER.name}-reader` };
  const put = await cp.admin.put(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${role.metadata.name}`, role);
  if (put.status === 404) {
    const created = await cp.admin.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', role);
    if (created.status !== 201 && created.status !== 409) throw new Error(`create ClusterRole: ${created.text}`);
  }
  const credentials = await cp.serviceAccountCredentials(SCRAPER.namespace, SCRAPER.name);
  const binding = await cp.admin.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: SCRAPER.name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name },
    subjects: [{ kind: 'ServiceAccount', ...SCRAPER }],
  });
  if (binding.status !== 201 && binding.status !== 409) throw new Error(`create ClusterRoleBinding: ${binding.text}`);
  return credentials.token as string;
}
