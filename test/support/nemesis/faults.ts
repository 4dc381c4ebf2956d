import type { ControlPlane } from '../../../devenv/controlplane.ts';
import { eventually } from '../../../devenv/crds.ts';
import type { ToxicSpec, Toxiproxy } from '../../../devenv/toxiproxy.ts';
import type { Drill } from './drill.ts';
import { DRILL_LEASE, type Replica } from './replicas.ts';

/** The faults of the control plane and the network, each injected and healed by `injectFault`. */
export const FAULT_KINDS = [
  'apiserver-kill',
  'etcd-kill',
  'etcd-compaction',
  'leader-pause',
  'partition',
  'black-hole',
  'latency',
  'bandwidth',
  'reset-peer',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** What a fault acts on: the control plane, the drill's replicas (each reaching it through its own toxiproxy proxy, named after it). */
export interface FaultTarget {
  cp: ControlPlane;
  drill: Drill;
  toxiproxy: Toxiproxy;
}

/** Longer than the lease: another replica takes over meanwhile. */
export const PAST_THE_LEASE_MS = (DRILL_LEASE.durationS + 3) * 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function currentLeader(drill: Drill): Promise<Replica> {
  const holder = await eventually('a leader', async () => drill.holder(), 90_000);
  return drill.replicas.get(holder) as Replica;
}

async function takenOverFrom(drill: Drill, identity: string): Promise<void> {
  await eventually(
    `another replica takes the lease from ${identity}`,
    async () => {
      const holder = await drill.holder();
      return holder !== undefined && holder !== identity;
    },
    30_000,
  );
}

async function withToxics(target: FaultTarget, toxics: ToxicSpec[], ms: number): Promise<void> {
  const leader = await currentLeader(target.drill);
  const added = [];
  for (const toxic of toxics) added.push(await target.toxiproxy.addToxic(leader.identity, toxic));
  await sleep(ms);
  for (const toxic of added) await target.toxiproxy.removeToxic(leader.identity, toxic.name);
}

/** Breaks and heals one thing; returns when it is healed (convergence is the caller's to wait for). */
const INJECT: Record<FaultKind, (target: FaultTarget) => Promise<void>> = {
  'apiserver-kill': async ({ cp }) => {
    await cp.kill('kube-apiserver');
    await sleep(3_000);
    await cp.restart('kube-apiserver');
  },
  'etcd-kill': async ({ cp }) => {
    await cp.kill('etcd');
    await sleep(3_000);
    await cp.restart('etcd');
    await eventually('kube-apiserver ready again', async () => (await cp.admin.get('/readyz')).status === 200, 60_000);
  },
  // The watches are held down while users' edits move the versions on; etcd is compacted and the
  // API server restarted (its watch cache then starts after the compaction), so the informers
  // resume from a compacted version: 410 Gone, and a relist.
  'etcd-compaction': async ({ cp, drill }) => {
    for (const r of drill.replicas.values()) {
      r.proxy.holdWatches(() => true);
      r.proxy.cutWatches(() => true);
    }
    try {
      await sleep(3_000);
      await cp.compactEtcd();
      await cp.restart('kube-apiserver');
    } finally {
      for (const r of drill.replicas.values()) r.proxy.holdWatches(undefined);
    }
  },
  'leader-pause': async ({ drill }) => {
    const leader = await currentLeader(drill);
    leader.pause();
    try {
      await takenOverFrom(drill, leader.identity);
      await sleep(2_000);
    } finally {
      leader.resume();
    }
  },
  partition: async ({ drill, toxiproxy }) => {
    const leader = await currentLeader(drill);
    await toxiproxy.setEnabled(leader.identity, false);
    try {
      await takenOverFrom(drill, leader.identity);
      await sleep(PAST_THE_LEASE_MS - DRILL_LEASE.durationS * 1000);
    } finally {
      await toxiproxy.setEnabled(leader.identity, true);
    }
  },
  // Packets dropped until each connection times out (2 s) and is closed with what it held. A
  // timeout of 0 would hold the bytes and deliver them when the toxic goes, after the lease expired:
  // writes sent before the deadline arriving late, which no local fence can stop (docs/controller.md).
  'black-hole': (target) =>
    withToxics(target, [{ type: 'timeout', stream: 'upstream', attributes: { timeout: 2_000 } }], PAST_THE_LEASE_MS),
  latency: (target) =>
    withToxics(
      target,
      [
        { type: 'latency', stream: 'upstream', attributes: { latency: 300 } },
        { type: 'latency', stream: 'downstream', attributes: { latency: 300 } },
      ],
      8_000,
    ),
  bandwidth: (target) =>
    withToxics(target, [{ type: 'bandwidth', stream: 'downstream', attributes: { rate: 16 } }], 8_000),
  'reset-peer': (target) =>
    withToxics(target, [{ type: 'reset_peer', stream: 'upstream', attributes: { timeout: 0 } }], 5_000),
};

/**
 * How long after a heal users' writes may still fail for it. etcd's and kube-apiserver's restarts
 * leave the API server's etcd connections to recover one by one: a write may meet `rpc error: code
 * = Unavailable` after others succeeded.
 */
const GRACE_MS: Partial<Record<FaultKind, number>> = {
  'apiserver-kill': 30_000,
  'etcd-kill': 30_000,
  'etcd-compaction': 30_000,
};

/** Injects and heals `kind` as an outage of the drill (users' failed writes within it are explained). */
export function injectFault(kind: FaultKind, target: FaultTarget): Promise<void> {
  return target.drill.outage(kind, () => INJECT[kind](target), GRACE_MS[kind]);
}
