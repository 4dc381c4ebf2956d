import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_BASE_DOMAIN } from '../../../api/constants.ts';
import { siteHostname } from '../../../api/hostname.ts';
import type { KubeHttp } from '../../../devenv/kube-http.ts';
import type { FinalRecord, FinalSite } from '../history/index.ts';

interface SiteObject {
  metadata: { name: string; namespace: string; generation?: number; deletionTimestamp?: string; finalizers?: string[] };
  spec: { hostname?: string };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; observedGeneration?: number }> };
}

export async function finalSites(api: KubeHttp, namespace: string): Promise<FinalSite[]> {
  const list = await api.must<{ items: SiteObject[] }>(
    'GET',
    `/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`,
  );
  return list.items.map((s) => {
    const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
    return {
      namespace: s.metadata.namespace,
      name: s.metadata.name,
      generation: s.metadata.generation ?? 0,
      ...(s.metadata.deletionTimestamp && { deletionTimestamp: s.metadata.deletionTimestamp }),
      finalizers: s.metadata.finalizers ?? [],
      hostname: siteHostname(s, DEFAULT_BASE_DOMAIN),
      ...(ready && {
        readyStatus: ready.status,
        readyObservedGeneration: ready.observedGeneration,
        ...(ready.reason && { readyReason: ready.reason }),
      }),
    };
  });
}

/** The file record store's records (`<namespace>_<name>.json`, written by `--records-dir`). */
export async function fileRecords(dir: string): Promise<FinalRecord[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  return Promise.all(
    names.map(async (n) => {
      const record = JSON.parse(await readFile(join(dir, n), 'utf8')) as { site: string; hostname: string };
      return { siteKey: record.site, hostname: record.hostname };
    }),
  );
}

/** The sites that keep the namespace from being converged, each with why: none when converged. */
export function unconverged(sites: readonly FinalSite[]): string[] {
  return sites.flatMap((s) => {
    if (s.deletionTimestamp !== undefined) return [`${s.name}: deleting since ${s.deletionTimestamp}`];
    if (s.readyStatus === 'True' && s.readyObservedGeneration === s.generation) return [];
    const reason = s.readyReason ? ` (${s.readyReason})` : '';
    return [
      `${s.name}: Ready=${s.readyStatus ?? 'none'}${reason} at generation ${s.readyObservedGeneration} of ${s.generation}`,
    ];
  });
}

/**
 * Polls until no site is being deleted and every one is Ready=True at its generation: the time that
 * was first seen, or, after `timeoutMs`, the sites still pending then.
 */
export async function waitConverged(
  api: KubeHttp,
  namespace: string,
  timeoutMs: number,
): Promise<{ at: number } | { pending: string[] }> {
  const deadline = Date.now() + timeoutMs;
  let pending = ['(no answer from the API server)'];
  while (Date.now() < deadline) {
    try {
      pending = unconverged(await finalSites(api, namespace));
      if (pending.length === 0) return { at: Date.now() };
    } catch (error) {
      pending = [`(the API server: ${(error as Error).message})`];
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { pending };
}
