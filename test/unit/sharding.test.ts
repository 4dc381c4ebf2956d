import { expect } from 'chai';
import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { DRAIN_LABEL, SHARD_LABEL, SHARD_LEASE_LABEL } from '../../api/index.ts';
import { movedSite, shardMove } from '../../controller/sharding/shard-moves.ts';
import type { KubeObject, Lease } from '../../kube/objects.ts';
import { HashRing } from '../../sharding/hash-ring.ts';
import { ShardMembership } from '../../sharding/shard-membership.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../webhook/admission/review.ts';
import { shardRequestOf, withShardLabel } from '../../webhook/admission/shard-label.ts';
import { ManualClock } from '../support/kube/index.ts';

const keys = (n: number) => Array.from({ length: n }, (_, i) => `ns-${i % 7}/site-${i}`);

function owners(ring: HashRing, list: string[]): Map<string, string | undefined> {
  return new Map(list.map((k) => [k, ring.shardFor(k)]));
}

describe('sharding: the consistent-hash ring', () => {
  it('has no owner while no shard is live', () => {
    expect(new HashRing([]).shardFor('a/b')).to.equal(undefined);
  });

  it('gives every process the same owner, whatever order it learnt the shards in', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{1,20}$/), { minLength: 1, maxLength: 8 }), (shards) => {
        const a = new HashRing(shards);
        const b = new HashRing([...shards].reverse());
        for (const key of keys(200)) expect(a.shardFor(key)).to.equal(b.shardFor(key));
      }),
      { numRuns: 50 },
    );
  });

  it('gives each of 3 shards about a third of 30,000 keys', () => {
    const ring = new HashRing(['controller-a', 'controller-b', 'controller-c']);
    const counts = new Map<string, number>();
    for (const key of keys(30_000)) {
      const shard = ring.shardFor(key) ?? '';
      counts.set(shard, (counts.get(shard) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).to.deep.equal(['controller-a', 'controller-b', 'controller-c']);
    for (const n of counts.values()) expect(n / 30_000).to.be.within(0.27, 0.4);
  });

  it("moves only the keys the new shard takes when one joins, and only the leaving shard's when one leaves", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), { minLength: 2, maxLength: 6 }),
        (shards) => {
          const [joining, ...rest] = shards as [string, ...string[]];
          const list = keys(2_000);
          const before = owners(new HashRing(rest), list);
          const after = owners(new HashRing(shards), list);
          let moved = 0;
          for (const key of list) {
            if (before.get(key) === after.get(key)) continue;
            moved++;
            expect(after.get(key), key).to.equal(joining);
          }
          // Consistent hashing moves about 1/N of the keys, nowhere near all of them.
          expect(moved / list.length).to.be.below(2.5 / shards.length);
          // Leaving again gives back exactly the earlier owners.
          expect(owners(new HashRing(rest), list)).to.deep.equal(before);
        },
      ),
      { numRuns: 40 },
    );
  });
});

function lease(shard: string, spec: Lease['spec']): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: `staticsite-shard-${shard}`, namespace: 'sys', labels: { [SHARD_LEASE_LABEL]: shard } },
    spec,
  };
}

describe('sharding: live shards from their Leases', () => {
  it('a shard is live from a renewal seen until one lease duration later on our clock, not on the renewTime', async () => {
    const clock = new ManualClock();
    const members = new ShardMembership(clock, SHARD_LEASE_LABEL);
    // A renewTime far in the past (another machine's clock): the observation counts.
    members.observe(
      'add',
      lease('a', { holderIdentity: 'pod-a', leaseDurationSeconds: 15, renewTime: '2001-01-01T00:00:00.000000Z' }),
    );
    expect(members.liveShards()).to.deep.equal(['a']);
    expect(members.untilNextExpiry()).to.equal(15_000);
    await clock.advance(14_999);
    expect(members.isLive('a')).to.equal(true);
    // The same spec again (a resync, no renewal) does not extend it.
    members.observe(
      'update',
      lease('a', { holderIdentity: 'pod-a', leaseDurationSeconds: 15, renewTime: '2001-01-01T00:00:00.000000Z' }),
    );
    await clock.advance(1);
    expect(members.isLive('a')).to.equal(false);
    expect(members.untilNextExpiry()).to.equal(undefined);
    // A renewal brings it back.
    members.observe(
      'update',
      lease('a', { holderIdentity: 'pod-a', leaseDurationSeconds: 15, renewTime: '2001-01-01T00:00:16.000000Z' }),
    );
    expect(members.liveShards()).to.deep.equal(['a']);
  });

  it('a released Lease (no holder) is dead at once, a deleted one gone; Leases without the label are ignored', () => {
    const clock = new ManualClock();
    const members = new ShardMembership(clock, SHARD_LEASE_LABEL);
    members.observe('add', lease('a', { holderIdentity: 'pod-a', leaseDurationSeconds: 15 }));
    members.observe('add', lease('b', { holderIdentity: 'pod-b', leaseDurationSeconds: 15 }));
    members.observe('add', {
      ...lease('c', { holderIdentity: 'pod-c', leaseDurationSeconds: 15 }),
      metadata: { name: 'other' },
    });
    expect(members.ring().shards).to.deep.equal(['a', 'b']);
    members.observe('update', lease('a', { holderIdentity: '', leaseDurationSeconds: 1 }));
    members.observe('delete', lease('b', { holderIdentity: 'pod-b', leaseDurationSeconds: 15 }));
    expect(members.liveShards()).to.deep.equal([]);
    expect(members.ring().shardFor('x/y')).to.equal(undefined);
  });
});

function site(labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 's', namespace: 'n', resourceVersion: '7', labels },
  };
}

describe("sharding: the sharder's moves", () => {
  const ring = new HashRing(['a', 'b', 'c']);
  const key = keys(50).find((k) => ring.shardFor(k) === 'b') as string;
  const live = (shard: string) => shard !== 'dead';
  const cases: Array<[string, Record<string, string>, ReturnType<typeof shardMove>]> = [
    ['unlabelled: assigned', {}, { kind: 'assign', from: undefined, to: 'b' }],
    ['of a dead shard: assigned directly', { [SHARD_LABEL]: 'dead' }, { kind: 'assign', from: 'dead', to: 'b' }],
    [
      'of a dead shard, drained: assigned',
      { [SHARD_LABEL]: 'dead', [DRAIN_LABEL]: 'true' },
      { kind: 'assign', from: 'dead', to: 'b' },
    ],
    ['of its ring shard: left alone', { [SHARD_LABEL]: 'b' }, undefined],
    [
      'of its ring shard, drained: the drain withdrawn',
      { [SHARD_LABEL]: 'b', [DRAIN_LABEL]: 'true' },
      { kind: 'undrain', shard: 'b' },
    ],
    ['of another live shard: drained, never relabelled', { [SHARD_LABEL]: 'a' }, { kind: 'drain', from: 'a', to: 'b' }],
    [
      'of another live shard, drained: waits for the hand-over',
      { [SHARD_LABEL]: 'a', [DRAIN_LABEL]: 'true' },
      undefined,
    ],
  ];
  for (const [name, labels, expected] of cases) {
    it(name, () => {
      expect(shardMove(key, site(labels), ring, live)).to.deep.equal(expected);
    });
  }

  it('no live shard: nothing moves', () => {
    expect(shardMove(key, site({}), new HashRing([]), live)).to.equal(undefined);
  });

  it('a move changes only the two labels and keeps the resourceVersion it was judged on', () => {
    const before = site({ app: 'x', [SHARD_LABEL]: 'dead', [DRAIN_LABEL]: 'true' });
    expect(movedSite(before, { kind: 'assign', from: 'dead', to: 'b' }).metadata).to.deep.equal({
      ...before.metadata,
      labels: { app: 'x', [SHARD_LABEL]: 'b' },
    });
    expect(
      movedSite(site({ [SHARD_LABEL]: 'a' }), { kind: 'drain', from: 'a', to: 'b' }).metadata.labels,
    ).to.deep.equal({
      [SHARD_LABEL]: 'a',
      [DRAIN_LABEL]: 'true',
    });
    expect(before.metadata.labels?.[DRAIN_LABEL]).to.equal('true');
  });
});

function review(object: unknown, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: 'staticsite.dev', version: 'v1', kind: 'StaticSite' },
    resource: { group: 'staticsite.dev', version: 'v1', resource: 'staticsites' },
    namespace: 'web',
    name: 'shop',
    operation: 'CREATE',
    object,
    ...extra,
  };
}

describe('webhook: the shard label at admission', () => {
  const allowed: AdmissionResponse = { uid: 'u', allowed: true };

  it('labels a site without labels, or adds the key to its labels, and keeps the mutation it had (RFC 6902 applied by fast-json-patch)', () => {
    const finalizer = [{ op: 'add', path: '/metadata/finalizers', value: ['staticsite.dev/external-record'] }];
    const mutated: AdmissionResponse = {
      ...allowed,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(finalizer)).toString('base64'),
    };
    for (const labels of [undefined, {}, { app: 'shop' }]) {
      const object = {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'shop', ...(labels && { labels }) },
      };
      const request = shardRequestOf(review(object), mutated);
      expect(request).to.deep.equal({ key: 'web/shop', hasLabels: labels !== undefined });
      const response = withShardLabel(mutated, request as NonNullable<typeof request>, 'controller-b');
      const patch = JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString('utf8'));
      const result = jsonPatch.applyPatch(structuredClone(object), patch).newDocument as {
        metadata: Record<string, unknown>;
      };
      expect(result.metadata.labels).to.deep.equal({ ...labels, [SHARD_LABEL]: 'controller-b' });
      expect(result.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    }
  });

  it('leaves alone: a labelled site, a generateName create, a subresource, a DELETE, a denial, another resource', () => {
    const plain = { metadata: { name: 'shop' } };
    expect(shardRequestOf(review({ metadata: { name: 'shop', labels: { [SHARD_LABEL]: 'a' } } }), allowed)).to.equal(
      undefined,
    );
    expect(shardRequestOf(review({ metadata: { generateName: 'shop-' } }, { name: '' }), allowed)).to.equal(undefined);
    expect(shardRequestOf(review(plain, { subResource: 'status' }), allowed)).to.equal(undefined);
    expect(shardRequestOf(review(plain, { operation: 'DELETE' }), allowed)).to.equal(undefined);
    expect(shardRequestOf(review(plain), { uid: 'u', allowed: false })).to.equal(undefined);
    expect(
      shardRequestOf(review(plain, { resource: { group: 'apps', version: 'v1', resource: 'deployments' } }), allowed),
    ).to.equal(undefined);
    expect(shardRequestOf(review(plain, { operation: 'UPDATE' }), allowed)).to.deep.equal({
      key: 'web/shop',
      hasLabels: false,
    });
  });
});
