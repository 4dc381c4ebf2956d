import { expect } from 'chai';
import type { StaticSiteV1 } from '../../api/index.ts';
import { CHILDREN, childRegistry } from '../../controller/child-registry.ts';
import { ingressAddresses, ingressChild, ingressReadiness } from '../../controller/reconcile/ingress.ts';
import type { Ingress } from '../../kube/objects.ts';

const site: StaticSiteV1 = {
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name: 'hello', namespace: 'demo', uid: 'u-1', generation: 1 },
  spec: { content: '<h1>hi</h1>', replicas: 1 },
};

describe('controller: the Ingress child (--ingress-class)', () => {
  it("routes the site's hostname, every path, to its Service, for the class's ingress controller", () => {
    const ingress: Ingress = { metadata: { name: 'hello', namespace: 'demo' } };
    ingressChild('public', 'sites.example.com').mutate(ingress, site, { image: 'x' });
    expect(ingress.metadata.ownerReferences?.[0]).to.include({ kind: 'StaticSite', name: 'hello', controller: true });
    expect(ingress.spec).to.deep.equal({
      ingressClassName: 'public',
      rules: [
        {
          host: 'hello.demo.sites.example.com',
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'hello', port: { number: 80 } } } }],
          },
        },
      ],
    });
  });

  it('joins the registry with --ingress-class only, and never beside an HTTPRoute', () => {
    expect(childRegistry(undefined, 'd')).to.equal(CHILDREN);
    expect(childRegistry(undefined, 'd', 'public').map((k) => k.type.kind)).to.deep.equal([
      'ConfigMap',
      'Deployment',
      'Service',
      'Ingress',
    ]);
  });

  it('is Ready once its ingress controller reports an address; its IPs and hostnames are the record targets', () => {
    const waiting = ingressReadiness({ metadata: { name: 'hello' }, status: { loadBalancer: {} } }, 'public');
    expect(waiting).to.deep.equal({
      status: 'False',
      reason: 'IngressPending',
      message: 'Waiting for the ingress controller of class "public" to report an address for Ingress "hello"...',
      progressing: true,
    });
    expect(ingressReadiness(undefined, 'public')?.reason).to.equal('IngressPending');
    const served: Ingress = {
      metadata: { name: 'hello' },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }, { hostname: 'lb.example.net' }] } },
    };
    expect(ingressReadiness(served, 'public')).to.equal(undefined);
    expect(ingressAddresses(served)).to.deep.equal([
      { type: 'IPAddress', value: '192.0.2.1' },
      { type: 'Hostname', value: 'lb.example.net' },
    ]);
  });
});
