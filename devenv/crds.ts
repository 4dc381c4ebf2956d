import type { CustomResourceDefinition } from '../api/index.ts';
import type { KubeHttp } from './kube-http.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

interface CrdStatus {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** Creates or replaces a CRD and waits until it is Established and its resources are served. */
export async function installCrd(client: KubeHttp, crd: CustomResourceDefinition): Promise<void> {
  const existing = await client.get<{ metadata: { resourceVersion: string } }>(`${CRDS}/${crd.metadata.name}`);
  if (existing.status === 200) {
    await client.must('PUT', `${CRDS}/${crd.metadata.name}`, {
      ...crd,
      metadata: { ...crd.metadata, resourceVersion: existing.body.metadata.resourceVersion },
    });
  } else {
    await client.must('POST', CRDS, crd);
  }
  await eventually(`CRD ${crd.metadata.name} Established`, async () => {
    const res = await client.get<CrdStatus>(`${CRDS}/${crd.metadata.name}`);
    return res.body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  const { group, names, versions } = crd.spec;
  for (const v of versions.filter((x) => x.served)) {
    await eventually(`${names.plural}.${group}/${v.name} served`, async () => {
      const res = await client.get(`/apis/${group}/${v.name}`);
      return res.status === 200 && res.text.includes(`"${names.plural}"`);
    });
  }
}

interface CrdConditions {
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

/**
 * Deletes a CRD (and so every object of it) and waits until it is gone. The API server's CRD
 * finalizer polls every 5 s for up to a minute per attempt while objects remain, hence the minute and
 * a half; a timeout names the CRD's conditions, which say what the finalizer is waiting for.
 */
export async function uninstallCrd(client: KubeHttp, name: string): Promise<void> {
  await client.delete(`${CRDS}/${name}`);
  try {
    await eventually(`CRD ${name} deleted`, async () => (await client.get(`${CRDS}/${name}`)).status === 404, 90_000);
  } catch (error) {
    const crd = await client.get<CrdConditions>(`${CRDS}/${name}`);
    if (crd.status === 404) return; // gone just at the deadline
    const conditions = (crd.body.status?.conditions ?? []).map(
      (c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`,
    );
    throw new Error(`${(error as Error).message}; its conditions: ${conditions.join('; ') || 'none'}`);
  }
}
