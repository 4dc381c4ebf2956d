import { SHARD_LABEL } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { ControllerProcess } from './controller-harness.ts';

/** How many of `sites` each shard label holds (`(none)` for the unlabelled). */
export function sitesPerShard(sites: ReadonlyArray<{ metadata: { labels?: Record<string, string> } }>) {
  const counts: Record<string, number> = {};
  for (const s of sites) {
    const shard = s.metadata.labels?.[SHARD_LABEL] ?? '(none)';
    counts[shard] = (counts[shard] ?? 0) + 1;
  }
  return counts;
}

/**
 * Starts `staticsite controller --sharded` as shard `name` (the built CLI): sites in `namespace`,
 * claims and Leases in `system`, records in `recordsDir`; `args` adds to those.
 */
export function startShardController(options: {
  controlPlane: ControlPlane;
  name: string;
  kubeconfig: string;
  logDir: string;
  namespace: string;
  system: string;
  recordsDir: string;
  args: string[];
}): Promise<ControllerProcess> {
  const { controlPlane, name, kubeconfig, logDir, namespace, system, recordsDir } = options;
  return ControllerProcess.start({
    controlPlane,
    identity: name,
    kubeconfig,
    logDir,
    cli: builtCli(),
    args: [
      ...['--namespace', namespace, '--claims-namespace', system, '--leader-elect-namespace', system],
      ...['--records-dir', recordsDir, '--sharded', '--shard-name', name],
      ...options.args,
    ],
  });
}
