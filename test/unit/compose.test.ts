import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { apiServerFlags, controllerManagerFlags, DEFAULT_CONTROLLERS, etcdFlags } from '../../devenv/controlplane.ts';

const root = new URL('../../', import.meta.url);
interface ComposeFile {
  services: Record<
    string,
    { image?: string; command?: string[]; entrypoint?: string[]; build?: { args?: Record<string, string> } }
  >;
}
// Compose files use merge keys (<<), which the core schema leaves out.
const withMerge = { schema: CORE_SCHEMA.withTags(mergeTag) };
const compose = load(readFileSync(new URL('docker-compose.yml', root), 'utf8'), withMerge) as ComposeFile;
const localOverride = load(readFileSync(new URL('docker-compose.local.yml', root), 'utf8'), withMerge) as ComposeFile;
const buildScript = readFileSync(new URL('devenv/image/build.sh', root), 'utf8');
const goMod = readFileSync(new URL('devenv/controlplane/go.mod', root), 'utf8');
const kubernetesVersion = /k8s\.io\/kubernetes (v\S+)/.exec(goMod)?.[1];
const etcdVersion = /go\.etcd\.io\/etcd\/server\/v3 v(\S+)/.exec(goMod)?.[1];
// Our image, tagged with package.json's version (test/unit/version.test.ts keeps the file's literal equal).
const operatorImage = `staticsite-operator:${(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version}`;

function flags(list: string[]): Map<string, string> {
  return new Map(
    list.filter((f) => f.startsWith('--')).map((f) => [f.split('=')[0] ?? f, f.slice(f.indexOf('=') + 1)]),
  );
}

function service(name: string) {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
}

describe('docker-compose.yml matches the control plane of the tests', () => {
  it('pins the Kubernetes and etcd releases of devenv/controlplane/go.mod', () => {
    expect(kubernetesVersion).to.match(/^v1\.\d+\.\d+$/);
    expect(service('kube-apiserver').image).to.equal(`registry.k8s.io/kube-apiserver:${kubernetesVersion}`);
    expect(service('kube-controller-manager').image).to.equal(
      `registry.k8s.io/kube-controller-manager:${kubernetesVersion}`,
    );
    for (const kubectl of ['apply-local-overlay', 'sample-site', 'kubectl']) {
      expect(service(kubectl).image, kubectl).to.equal(`registry.k8s.io/kubectl:${kubernetesVersion}`);
      expect(service(kubectl).entrypoint?.[0], kubectl).to.equal('kubectl');
    }
    expect(service('etcd').image).to.equal(`registry.k8s.io/etcd:${etcdVersion}-0`);
  });

  it('docker-compose.local.yml names the images npm run image makes, for every service', () => {
    const localImages: Record<string, string> = {
      etcd: `staticsite-local/etcd:v${etcdVersion}`,
      'kube-apiserver': `staticsite-local/kube-apiserver:${kubernetesVersion}`,
      'kube-controller-manager': `staticsite-local/kube-controller-manager:${kubernetesVersion}`,
      'apply-local-overlay': `staticsite-local/kubectl:${kubernetesVersion}`,
      'sample-site': `staticsite-local/kubectl:${kubernetesVersion}`,
      kubectl: `staticsite-local/kubectl:${kubernetesVersion}`,
      dns: 'staticsite-local/bind9:9.18',
    };
    expect(Object.keys(localOverride.services).sort()).to.deep.equal(Object.keys(compose.services).sort());
    for (const [name, override] of Object.entries(localOverride.services)) {
      if (localImages[name]) {
        expect(override.image, name).to.equal(localImages[name]);
      } else {
        // Our image: built from the Dockerfile on the local bases build.sh tags.
        expect(service(name).image, name).to.equal(operatorImage);
        expect(override.build?.args, name).to.deep.equal({
          BUILD_BASE: 'staticsite-local/node:24',
          RUNTIME_BASE: 'staticsite-local/nodejs24-runtime:nonroot',
        });
      }
    }
    expect(buildScript).to.include('build_base="$LOCAL/node:24"');
    expect(buildScript).to.include('runtime_base="$LOCAL/nodejs24-runtime:nonroot"');
    expect(buildScript).to.include('tag="$LOCAL/$component:$tag_version"');
    expect(buildScript).to.include('bind_image="$LOCAL/bind9:9.18"');
    // The same BIND release line as the official image the file names.
    expect(service('dns').image).to.equal('internetsystemsconsortium/bind9:9.18');
  });

  it('starts kube-apiserver with the harness flags', () => {
    const expected = flags(apiServerFlags({ etcdUrl: 'x', port: 1, pki: '/pki', certDir: '/d' }));
    const actual = flags(service('kube-apiserver').command ?? []);
    expect([...actual.keys()].sort()).to.deep.equal([...expected.keys()].sort());
    for (const [flag, value] of expected) {
      if (['--etcd-servers', '--secure-port', '--cert-dir'].includes(flag)) continue;
      expect(actual.get(flag), flag).to.equal(value);
    }
  });

  it('starts kube-controller-manager and etcd with the harness flags and controllers', () => {
    const kcm = flags(
      controllerManagerFlags({ kubeconfig: 'k', controllers: DEFAULT_CONTROLLERS, port: 1, certDir: 'd' }),
    );
    const actualKcm = flags(service('kube-controller-manager').command ?? []);
    expect([...actualKcm.keys()].sort()).to.deep.equal([...kcm.keys()].sort());
    expect(actualKcm.get('--controllers')).to.equal(DEFAULT_CONTROLLERS.join(','));
    const etcd = flags(etcdFlags({ dataDir: 'd', clientUrl: 'c', peerUrl: 'p' }));
    expect([...flags(service('etcd').command ?? []).keys()].sort()).to.deep.equal([...etcd.keys()].sort());
  });

  it('applies the local overlay and runs certs, webhook, controller and the node simulator from our image', () => {
    expect(service('apply-local-overlay').command).to.include('/manifests/overlays/local');
    for (const name of ['certs', 'webhook', 'controller', 'node-simulator']) {
      expect(service(name).image, name).to.equal(operatorImage);
    }
    expect(service('webhook').command).to.include('--port=8443');
  });
});
