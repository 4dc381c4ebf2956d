import { CRD_NAME } from '../api/constants.ts';
import type { KubeApi } from '../kube/api-client.ts';
import type { MigrateResult, Progress } from '../migration/migrate.ts';
import type { StorageState } from '../migration/storage-state.ts';
import { terminationSignal } from '../process/termination-signal.ts';
import { CommandLine, nonNegativeInt, positiveInt } from './flags.ts';
import type { CommandIO } from './usage.ts';

const MIGRATE = new CommandLine('migrate-storage', {
  'dry-run': {
    type: 'boolean',
    default: false,
    help: 'report storedVersions and how many objects would be written back; change nothing',
  },
  kubeconfig: { type: 'string', value: 'F', help: 'otherwise in-cluster, then $KUBECONFIG, then ~/.kube/config' },
  qps: { type: 'string', default: '20', value: 'N', help: 'requests a second to the API server, 0 for no limit' },
  'page-size': { type: 'string', default: '100', value: 'N', help: 'objects per list page (limit)', detail: true },
  crd: { type: 'string', default: CRD_NAME, value: 'NAME', help: 'the CustomResourceDefinition', detail: true },
});

export const usage = MIGRATE.synopsis();
export const help = `${MIGRATE.help()}

When to run it: once the installed CRD's storage version is v1 and its conversion webhook serves
(every release so far), and before installing a release whose CRD no longer serves v1alpha1. It
writes every StaticSite back unchanged, so the API server stores it as v1, then sets the CRD's
status.storedVersions to [v1]; only then does the API server accept a CRD without v1alpha1.
On Kubernetes 1.37 and later a StorageVersionMigration does the same in-cluster
(docs/storage-migration.md).
A run that stops (conversion webhook down, interrupted) changes no storedVersions and exits 1; run it
again from the start: objects already stored as v1 cost one request each and are not written again.
Output: one JSON line per list page and one at the end. It needs get on the CRD, patch on its
/status, and list, get and patch on staticsites in every namespace (an admin kubeconfig has them).`;

/** What the command needs from the outside world; tests replace it. */
export interface MigrateStorageDeps {
  kubeApi: (kubeconfig: string | undefined, qps: number) => Promise<KubeApi>;
  signal?: AbortSignal;
}

async function defaultDeps(): Promise<MigrateStorageDeps> {
  const [{ SystemClock }, { connectKubeApi }, { TokenBucket }] = await Promise.all([
    import('../clock/clock.ts'),
    import('../kube/connect.ts'),
    import('../kube/token-bucket.ts'),
  ]);
  const clock = new SystemClock({ unrefTimers: false });
  return {
    kubeApi: (kubeconfig, qps) =>
      connectKubeApi(kubeconfig, { clock, requestTimeoutMs: 60_000, throttle: new TokenBucket(clock, qps, qps) }),
  };
}

const line = (io: CommandIO, fields: Record<string, unknown>) => io.stdout(`${JSON.stringify(fields)}\n`);

function stateFields(state: StorageState) {
  return {
    crd: state.crd,
    storageVersion: state.storageVersion,
    storedVersions: state.storedVersions,
    servedVersions: state.servedVersions,
    deprecatedVersions: state.deprecatedVersions,
  };
}

async function dryRun(api: KubeApi, crdName: string, pageSize: number, io: CommandIO): Promise<number> {
  const { countObjects } = await import('../migration/migrate.ts');
  const { readStorageState, versionsToRetire } = await import('../migration/storage-state.ts');
  const state = await readStorageState(api, crdName);
  const retire = versionsToRetire(state);
  const objects = retire.length === 0 ? undefined : await countObjects(api, state, pageSize);
  const msg =
    retire.length === 0
      ? `nothing to migrate: every object is stored as ${state.storageVersion}`
      : `would write back ${objects} objects at ${state.storageVersion}, then set status.storedVersions to [${state.storageVersion}]`;
  line(io, { event: 'dry-run', ...stateFields(state), retire, ...(objects !== undefined && { objects }), msg });
  return 0;
}

function reportResult(result: MigrateResult, io: CommandIO): void {
  const state = result.state;
  if (result.outcome === 'nothing-to-do') {
    line(io, {
      event: 'done',
      ...stateFields(state),
      msg: `nothing to migrate: every object is stored as ${state.storageVersion}`,
    });
    return;
  }
  line(io, {
    event: 'done',
    ...stateFields(state),
    ...result.progress,
    storedVersions: result.storedVersions,
    msg: `wrote back ${result.progress.rewritten} objects; status.storedVersions is [${result.storedVersions.join(', ')}]`,
  });
}

/** `staticsite migrate-storage`: every StaticSite written back at the storage version, then storedVersions trimmed. */
export async function migrateStorageCommand(
  args: string[],
  io: CommandIO,
  injected?: MigrateStorageDeps,
): Promise<number> {
  const flags = MIGRATE.parse(args).values;
  const qps = nonNegativeInt('--qps', flags.qps);
  const pageSize = positiveInt('--page-size', flags['page-size']);
  const deps = injected ?? (await defaultDeps());
  const api = await deps.kubeApi(flags.kubeconfig, qps);
  try {
    if (flags['dry-run']) return await dryRun(api, flags.crd, pageSize, io);
    const { MigrationError, migrateStorage } = await import('../migration/migrate.ts');
    const signal = deps.signal ?? terminationSignal();
    const onProgress = (progress: Progress, state: StorageState) =>
      line(io, { event: 'page', crd: state.crd, ...progress });
    try {
      reportResult(await migrateStorage(api, { crdName: flags.crd, pageSize, onProgress, signal }), io);
      return 0;
    } catch (error) {
      if (!(error instanceof MigrationError)) throw error;
      line(io, { event: 'stopped', ...error.progress, storedVersions: error.storedVersions, err: error.message });
      throw new Error(
        `stopped after writing back ${error.progress.rewritten} of the ${error.progress.listed} objects seen: ${error.message}; status.storedVersions left at [${error.storedVersions.join(', ')}]; fix the cause and run again`,
      );
    }
  } finally {
    api.transport.close();
  }
}

export { migrateStorageCommand as run };
