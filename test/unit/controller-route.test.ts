import { expect } from 'chai';
import type { StaticSiteV1 } from '../../api/index.ts';
import { CHILDREN, childRegistry, servedKinds } from '../../controller/child-registry.ts';
import { controllerRules } from '../../controller/rbac.ts';
import { httpRouteChild, parseGatewayRef, routeReadiness } from '../../controller/reconcile/route.ts';
import type { HTTPRoute } from '../../kube/objects.ts';

const site: StaticSiteV1 = {
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name: 'hello', namespace: 'demo', uid: 'u-1', generation: 1 },
  spec: { content: '<h1>hi</h1>', replicas: 1 },
};
const gateway = { namespace: 'infra', name: 'public' };

/** A route as a Gateway reports on it: one status.parents entry per parent, each with its conditions. */
function routeWith(parents: NonNullable<HTTPRoute['status']>['parents'], generation = 1): HTTPRoute {
  return { metadata: { name: 'hello', namespace: 'demo', generation }, status: { parents } };
}
const condition = (type: string, status: string, reason: string, message = '', observedGeneration = 1) => ({
  type,
  status,
  reason,
  message,
  observedGeneration,
});
const ours = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'public' };

describe('controller: the HTTPRoute child (--gateway)', () => {
  it('--gateway is NAMESPACE/NAME, with an optional listener', () => {
    expect(parseGatewayRef('infra/public')).to.deep.equal({ namespace: 'infra', name: 'public' });
    expect(parseGatewayRef('infra/public', 'http')).to.deep.equal({
      namespace: 'infra',
      name: 'public',
      sectionName: 'http',
    });
    for (const bad of ['public', 'infra/', '/public', 'a/b/c', '']) {
      expect(() => parseGatewayRef(bad), bad).to.throw(/--gateway wants NAMESPACE\/NAME/);
    }
  });

  it("routes the site's hostname on every path to its Service's port 80, owned by the site", () => {
    const route: HTTPRoute = { metadata: { name: 'hello', namespace: 'demo' } };
    httpRouteChild({ ...gateway, sectionName: 'http' }, 'sites.example.com').mutate(route, site, { image: 'x' });
    expect(route.spec).to.deep.equal({
      parentRefs: [{ ...ours, sectionName: 'http' }],
      hostnames: ['hello.demo.sites.example.com'],
      // the HTTPRoute CRD's defaults, written out: a stored route equals the built one
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ group: '', kind: 'Service', name: 'hello', port: 80, weight: 1 }],
        },
      ],
    });
    expect(route.metadata.ownerReferences).to.deep.equal([
      {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        name: 'hello',
        uid: 'u-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const spec = { ...site, spec: { ...site.spec, hostname: 'www.example.org' } };
    httpRouteChild(gateway, 'sites.example.com').mutate(route, spec, { image: 'x' });
    expect(route.spec?.hostnames).to.deep.equal(['www.example.org']);
  });

  it('only with --gateway and a cluster that serves HTTPRoute: the registry, and the RBAC it asks for', () => {
    expect(childRegistry(undefined, 'd')).to.equal(CHILDREN);
    // Without the Gateway API: an unserved HTTPRoute entry, which is not watched, ensured or granted.
    const unserved = childRegistry({ ref: gateway, served: false }, 'd');
    expect(unserved.map((k) => `${k.type.kind}${k.unserved ? ' (unserved)' : ''}`)).to.deep.equal([
      'ConfigMap',
      'Deployment',
      'Service',
      'HTTPRoute (unserved)',
    ]);
    expect(servedKinds(unserved)).to.deep.equal(CHILDREN);
    expect(controllerRules(unserved)).to.deep.equal(controllerRules(CHILDREN));
    // Its readiness hook is all it does: every site says why its hostname reaches nothing.
    expect(unserved[3]?.readiness?.(undefined, site, {})).to.deep.equal({
      ready: false,
      reason: 'GatewayAPIMissing',
      message:
        'the cluster serves no Gateway API HTTPRoute (gateway.networking.k8s.io/v1): no route to Gateway infra/public; install the Gateway API CRDs and restart the controller',
      unreachable: true,
    });
    const registry = childRegistry({ ref: gateway, served: true }, 'd');
    expect(registry.map((k) => k.type.kind)).to.deep.equal(['ConfigMap', 'Deployment', 'Service', 'HTTPRoute']);
    expect(controllerRules(registry)).to.deep.include({
      apiGroups: ['gateway.networking.k8s.io'],
      resources: ['httproutes'],
      verbs: ['get', 'list', 'watch', 'create', 'update'],
    });
    expect(controllerRules(CHILDREN).flatMap((r) => r.apiGroups)).not.to.include('gateway.networking.k8s.io');
  });
});

describe('controller: Ready from what the Gateway says of the route', () => {
  it('no word from the Gateway yet, or only on an older generation: waiting', () => {
    for (const route of [
      routeWith(undefined),
      routeWith([]),
      routeWith([{ parentRef: ours, conditions: [condition('Accepted', 'True', 'Accepted', '', 1)] }], 2),
    ]) {
      expect(routeReadiness(route, gateway)).to.deep.equal({
        status: 'False',
        reason: 'RoutePending',
        message: 'Waiting for Gateway infra/public to accept HTTPRoute "hello"...',
        progressing: true,
      });
    }
  });

  it('Accepted and ResolvedRefs for this Gateway: nothing stands in the way', () => {
    const parents = [
      {
        parentRef: ours,
        conditions: [condition('Accepted', 'True', 'Accepted'), condition('ResolvedRefs', 'True', 'ResolvedRefs')],
      },
    ];
    expect(routeReadiness(routeWith(parents), gateway)).to.equal(undefined);
    // a status parentRef names its Gateway as the route did: group, kind and namespace may be left to their defaults
    const defaulted = [{ ...parents[0], parentRef: { name: 'public' } }];
    const local = { metadata: { name: 'hello', namespace: 'infra', generation: 1 }, status: { parents: defaulted } };
    expect(routeReadiness(local, gateway)).to.equal(undefined);
  });

  it("a refusal says which Gateway refused, with the Gateway's reason and message", () => {
    const refused = routeWith([
      {
        parentRef: ours,
        conditions: [
          condition('Accepted', 'False', 'NotAllowedByListeners', 'no listener allows routes from namespace demo'),
        ],
      },
    ]);
    expect(routeReadiness(refused, gateway)).to.deep.equal({
      status: 'False',
      reason: 'RouteNotAccepted',
      message:
        'HTTPRoute "hello" is not accepted by Gateway infra/public: NotAllowedByListeners: no listener allows routes from namespace demo',
    });
    const unresolved = routeWith([
      {
        parentRef: ours,
        conditions: [
          condition('Accepted', 'True', 'Accepted'),
          condition('ResolvedRefs', 'False', 'BackendNotFound', 'service "hello" not found'),
        ],
      },
    ]);
    expect(routeReadiness(unresolved, gateway)).to.deep.equal({
      status: 'False',
      reason: 'RouteRefsNotResolved',
      message:
        'Gateway infra/public cannot resolve the references of HTTPRoute "hello": BackendNotFound: service "hello" not found',
    });
  });

  it("another Gateway's (or another listener's) verdict is not this one's", () => {
    const accepted = [condition('Accepted', 'True', 'Accepted'), condition('ResolvedRefs', 'True', 'ResolvedRefs')];
    const elsewhere = routeWith([
      { parentRef: { ...ours, name: 'internal' }, conditions: accepted },
      { parentRef: { ...ours, sectionName: 'https' }, conditions: accepted },
    ]);
    expect(routeReadiness(elsewhere, gateway)?.reason).to.equal('RoutePending');
    expect(routeReadiness(elsewhere, { ...gateway, sectionName: 'https' })).to.equal(undefined);
  });
});
