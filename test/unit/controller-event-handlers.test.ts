import { expect } from 'chai';
import type { StaticSiteV1 } from '../../api/index.ts';
import { EventHandlers } from '../../controller/event-handlers.ts';
import { configMapChild, deploymentChild, INSTANCE_LABEL, serviceChild } from '../../controller/reconcile/children.ts';
import { controllerReference } from '../../controller/reconcile/ownership.ts';
import type { Gateway, KubeObject } from '../../kube/objects.ts';

describe('controller: event handlers (informer events -> queue keys)', () => {
  const site = (rv: string): StaticSiteV1 => ({
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: 'web', uid: 'u1', resourceVersion: rv },
    spec: { content: 'x', replicas: 1 },
  });

  function handlers() {
    const keys: string[] = [];
    return { keys, handlers: new EventHandlers({ add: (key) => keys.push(key) }) };
  }

  it('a site event enqueues the site; the echo of our own write does not', () => {
    const { keys, handlers: h } = handlers();
    h.onSiteChange('add', site('1'));
    h.writes.wrote('StaticSite', site('2'));
    h.onSiteChange('update', site('2'));
    h.onSiteChange('update', site('3'));
    h.onSiteChange('delete', site('3'));
    expect(keys).to.deep.equal(['web/shop', 'web/shop', 'web/shop']);
  });

  it('a child event enqueues its owner: the controller reference, else the instance label', () => {
    const { keys, handlers: h } = handlers();
    const owned: KubeObject = {
      metadata: {
        name: 'shop-x',
        namespace: 'web',
        resourceVersion: '5',
        ownerReferences: [controllerReference(site('1'))],
      },
    };
    const labelled: KubeObject = {
      metadata: { name: 'other', namespace: 'web', resourceVersion: '6', labels: { [INSTANCE_LABEL]: 'blog' } },
    };
    const orphan: KubeObject = { metadata: { name: 'stray', namespace: 'web', resourceVersion: '7' } };
    h.onChildChange(deploymentChild, 'update', owned);
    h.onChildChange(configMapChild, 'delete', labelled);
    h.onChildChange(serviceChild, 'add', orphan);
    h.writes.wrote('Deployment', { metadata: { ...owned.metadata, resourceVersion: '8' } });
    h.onChildChange(deploymentChild, 'update', { metadata: { ...owned.metadata, resourceVersion: '8' } });
    expect(keys).to.deep.equal(['web/shop', 'web/blog']);
  });

  it("the Gateway's addresses change, or it comes or goes: every site is queued; any other change of it queues none", () => {
    const { keys, handlers: h } = handlers();
    const sites = [site('1'), { ...site('1'), metadata: { ...site('1').metadata, name: 'blog' } }];
    const noop = () => {};
    h.register({ sites: { onChange: noop, list: () => sites }, children: [] });
    const gateway = (rv: string, value?: string): Gateway => ({
      metadata: { name: 'public', namespace: 'infra', resourceVersion: rv },
      ...(value && { status: { addresses: [{ type: 'IPAddress', value }] } }),
    });
    h.onGatewayChange('add', gateway('1'));
    h.onGatewayChange('update', gateway('2', '192.0.2.1'), gateway('1'));
    h.onGatewayChange('update', gateway('3', '192.0.2.1'), gateway('2', '192.0.2.1'));
    h.onGatewayChange('delete', gateway('3', '192.0.2.1'));
    expect(keys).to.deep.equal(['web/shop', 'web/blog', 'web/shop', 'web/blog', 'web/shop', 'web/blog']);
  });
});
