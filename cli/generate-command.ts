import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildCrd, policyObjects } from '../api/index.ts';
import {
  type ChildRegistry,
  childRules,
  controllerRules,
  gatewayModeRules,
  type PolicyRule,
} from '../controller/rbac.ts';
import { ingressChild } from '../controller/reconcile/ingress.ts';
import { httpRouteChild } from '../controller/reconcile/route.ts';
import { crdYaml, yaml } from './crd-yaml.ts';
import { CommandLine, subcommand } from './flags.ts';
import type { CommandIO } from './usage.ts';

const GENERATE = new CommandLine('generate manifests', {
  dir: { type: 'string', default: 'manifests', value: 'DIR', help: 'the kustomize tree to write into' },
  check: { type: 'boolean', default: false, help: 'write nothing: exit 1 when a file is out of date' },
});

export const usage = GENERATE.synopsis();
export const help = GENERATE.help();

const HEADER = '# Generated from api/ by `npm run generate`. Do not edit by hand.\n';

const RBAC_HEADER =
  "# Generated from the controller's child registry (controller/rbac.ts) by `npm run generate`. Do not edit by hand.\n";

const LABELS = {
  'app.kubernetes.io/name': 'staticsite-controller',
  'app.kubernetes.io/part-of': 'staticsite-operator',
};

/** The controller's grant on the sites, their children and Events: cluster-wide, or (a Role) in one namespace. */
function controllerRole(namespace?: string) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: namespace ? 'Role' : 'ClusterRole',
    metadata: {
      name: 'staticsite-controller',
      ...(namespace && { namespace }),
      labels: LABELS,
    },
    rules: controllerRules(),
  };
}

/** A ClusterRole of `rules` and its binding to the controller's ServiceAccount, as one YAML stream. */
function boundClusterRole(name: string, rules: PolicyRule[]): string {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: LABELS },
    rules,
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: LABELS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: 'staticsite-controller', namespace: 'staticsite-system' }],
  };
  return `${yaml(role)}---\n${yaml(binding)}`;
}

/** manifests/overlays/gateway: the HTTPRoute child's grant and reading Gateways (the Gateway named is irrelevant to RBAC). */
const routeRbac = () =>
  boundClusterRole('staticsite-controller-routes', gatewayModeRules([httpRouteChild({ namespace: '', name: '' }, '')]));

/** manifests/overlays/ingress: the Ingress child's grant (the class named is irrelevant to RBAC). */
const ingressRbac = () =>
  boundClusterRole('staticsite-controller-ingresses', childRules([ingressChild('', '')] as ChildRegistry));

/** The files `npm run generate` owns, relative to the manifests directory, with their content. */
export function generatedManifests(): Map<string, string> {
  return new Map([
    ['crds/full/crd.yaml', HEADER + crdYaml(buildCrd())],
    ['crds/schema-only/crd.yaml', HEADER + crdYaml(buildCrd({ schemaOnly: true }))],
    ['crds/webhook-only/crd.yaml', HEADER + crdYaml(buildCrd({ withoutCelRules: true }))],
    // The admission-policy way: v1 only (no conversion webhook), the rules in the policies instead of the
    // schema, no scale subresource (no policy could hold the replicas rule there).
    ['policies/crd.yaml', HEADER + crdYaml(buildCrd({ schemaOnly: true, withoutCelRules: true, withoutScale: true }))],
    ['controller/controller-clusterrole.yaml', RBAC_HEADER + yaml(controllerRole())],
    // the single-namespace overlay's namespace (its kustomization.yaml says how to change it)
    ['overlays/single-namespace/controller-role.yaml', RBAC_HEADER + yaml(controllerRole('sites'))],
    ['overlays/gateway/controller-routes-rbac.yaml', RBAC_HEADER + routeRbac()],
    ['overlays/ingress/controller-ingress-rbac.yaml', RBAC_HEADER + ingressRbac()],
    [
      'policies/policies.yaml',
      HEADER +
        policyObjects()
          .map((o) => yaml(o))
          .join('---\n'),
    ],
  ]);
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

/** `staticsite generate manifests`: writes the generated CRDs into the kustomize tree, or with --check reports drift. */
export async function generateCommand(args: string[], io: CommandIO): Promise<number> {
  const [, rest] = subcommand(args, ['manifests']);
  const { values } = GENERATE.parse(rest);
  let stale = 0;
  for (const [file, content] of generatedManifests()) {
    const path = join(values.dir, file);
    if ((await readOrEmpty(path)) === content) continue;
    if (values.check) {
      io.stderr(`${path} is out of date: run npm run generate\n`);
      stale++;
    } else {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
      io.stdout(`wrote ${path}\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

export { generateCommand as run };
