import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * CustomResourceDefinitions other projects publish, which our optional manifests use: the Prometheus
 * Operator's (ServiceMonitor, PrometheusRule: manifests/prometheus), cert-manager's (Issuer,
 * Certificate: manifests/cert-manager), and Gateway API's (the engine's real-CRD parity). Both projects ship them as plain YAML inside their Go
 * modules, so they come from the Go module proxy, pinned, into the module cache.
 */
export const THIRD_PARTY_CRDS = {
  'prometheus-operator': {
    module: 'github.com/prometheus-operator/prometheus-operator',
    version: 'v0.85.0',
    files: [
      'example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml',
      'example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml',
    ],
  },
  'cert-manager': {
    module: 'github.com/cert-manager/cert-manager',
    version: 'v1.21.2',
    files: [
      'deploy/crds/cert-manager.io_issuers.yaml',
      'deploy/crds/cert-manager.io_clusterissuers.yaml',
      'deploy/crds/cert-manager.io_certificates.yaml',
      'deploy/crds/cert-manager.io_certificaterequests.yaml',
    ],
  },
  // Gateway API: its standard and experimental channels (config/crd/<channel>/) beside their
  // examples (examples/<channel>/), for the engine's parity with the API server on real CRDs.
  'gateway-api': { module: 'sigs.k8s.io/gateway-api', version: 'v1.6.3', files: [] },
} as const;

export type ThirdParty = keyof typeof THIRD_PARTY_CRDS;

/** The module directory of a project, downloading the module (a few MB) on first use. */
export async function thirdPartyModuleDir(project: ThirdParty): Promise<string> {
  const { module, version } = THIRD_PARTY_CRDS[project];
  const { stdout } = await run('go', ['mod', 'download', '-json', `${module}@${version}`], {
    env: { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH ?? ''}`, GOFLAGS: '-mod=mod' },
    cwd: '/',
    maxBuffer: 1 << 20,
  });
  const { Dir: dir, Error: error } = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!dir) throw new Error(`go mod download ${module}@${version}: ${error ?? 'no directory'}`);
  return dir;
}

/** Paths of a project's CRD files, downloading its module on first use. */
export async function thirdPartyCrdFiles(project: ThirdParty): Promise<string[]> {
  const dir = await thirdPartyModuleDir(project);
  return THIRD_PARTY_CRDS[project].files.map((file) => join(dir, file));
}
