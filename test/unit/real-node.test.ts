import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { dockerReference } from '../../devenv/real-node.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** `k8s.io/kubernetes vX` and every `=> k8s.io/<staging> vY` replace line of a go.mod. */
function kubernetesPins(goMod: string): string[] {
  return goMod
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^k8s\.io\/kubernetes v/.test(line) || / => k8s\.io\/\S+ v0\./.test(line));
}

describe('devenv/node: the real node module', () => {
  it('pins the control plane’s Kubernetes release and the same staging modules', () => {
    const controlPlane = kubernetesPins(read('devenv/controlplane/go.mod'));
    const node = kubernetesPins(read('devenv/node/go.mod'));
    expect(node.find((l) => l.startsWith('k8s.io/kubernetes '))).to.equal(
      controlPlane.find((l) => l.startsWith('k8s.io/kubernetes ')),
    );
    for (const line of node) expect(controlPlane, line).to.include(line);
  });

  it('names images as containerd stores them (the docker.io normalization of distribution/reference)', () => {
    expect(dockerReference('nginx')).to.equal('docker.io/library/nginx:latest');
    expect(dockerReference('staticsite-operator:0.1.0')).to.equal('docker.io/library/staticsite-operator:0.1.0');
    expect(dockerReference('nginxinc/nginx-unprivileged:1.28-alpine')).to.equal(
      'docker.io/nginxinc/nginx-unprivileged:1.28-alpine',
    );
    expect(dockerReference('registry.k8s.io/pause:3.10')).to.equal('registry.k8s.io/pause:3.10');
    expect(dockerReference('localhost:5000/site')).to.equal('localhost:5000/site:latest');
  });
});
