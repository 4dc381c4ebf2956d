import { expect } from 'chai';
import type { StaticSiteV1 } from '../../api/index.ts';
import { type ChildKind, deploymentChild } from '../../controller/reconcile/children.ts';
import { childrenReadiness } from '../../controller/reconcile/readiness.ts';
import { deploymentReadiness, desiredStatus, statusUnchanged } from '../../controller/reconcile/status.ts';
import type { Deployment } from '../../kube/objects.ts';

function deployment(generation: number, spec: number, status: Deployment['status']): Deployment {
  return { metadata: { name: 'shop', namespace: 'ns', generation }, spec: { replicas: spec }, status };
}

function site(generation: number, status?: StaticSiteV1['status']): StaticSiteV1 {
  return {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: 'ns', generation },
    spec: { content: 'x', replicas: 2 },
    status,
  };
}

/** What the registry's Deployment entry says of `d`: its readiness hook, asked as the reconciler asks it. */
function rollout(d: Deployment) {
  return childrenReadiness([deploymentChild as ChildKind], new Map([['Deployment', d]]), site(1), {});
}

const T0 = '2026-11-29T12:00:00Z';
const T1 = '2026-11-29T12:05:00Z';
const READY = {
  observedGeneration: 1,
  updatedReplicas: 2,
  replicas: 2,
  readyReplicas: 2,
  availableReplicas: 2,
};

// Expected sentences: k8s.io/kubectl v0.37.2 pkg/polymorphichelpers/rollout_status.go (DeploymentStatusViewer).
describe('controller: Ready condition reads like kubectl rollout status', () => {
  it('a spec the deployment controller has not seen yet', () => {
    expect(deploymentReadiness(deployment(2, 2, READY))).to.deep.equal({
      status: 'False',
      reason: 'RollingOut',
      message: 'Waiting for deployment spec update to be observed...',
      progressing: true,
    });
  });

  it('new replicas not all updated', () => {
    expect(deploymentReadiness(deployment(1, 2, { ...READY, updatedReplicas: 1 })).message).to.equal(
      'Waiting for deployment "shop" rollout to finish: 1 out of 2 new replicas have been updated...',
    );
  });

  it('old replicas pending termination', () => {
    expect(deploymentReadiness(deployment(1, 2, { ...READY, replicas: 3 })).message).to.equal(
      'Waiting for deployment "shop" rollout to finish: 1 old replicas are pending termination...',
    );
  });

  it('updated replicas not yet available: PodsNotReady', () => {
    expect(deploymentReadiness(deployment(1, 2, { ...READY, availableReplicas: 1 }))).to.deep.equal({
      status: 'False',
      reason: 'PodsNotReady',
      message: 'Waiting for deployment "shop" rollout to finish: 1 of 2 updated replicas are available...',
      progressing: true,
    });
  });

  it('progress deadline exceeded', () => {
    const d = deployment(1, 2, {
      ...READY,
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
    });
    expect(deploymentReadiness(d)).to.deep.equal({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'deployment "shop" exceeded its progress deadline',
    });
  });

  it('rolled out: Available', () => {
    expect(deploymentReadiness(deployment(1, 2, READY))).to.deep.equal({
      status: 'True',
      reason: 'Available',
      message: 'deployment "shop" successfully rolled out',
    });
  });
});

describe('controller: desired status', () => {
  const url = 'http://shop.example/';

  it('advances observedGeneration only once the generation is Ready', () => {
    const rolling = desiredStatus({
      site: site(3, { observedGeneration: 2 }),
      children: rollout(deployment(2, 2, READY)),
      url,
      now: T0,
    });
    expect(rolling.observedGeneration).to.equal(2);
    expect(rolling.conditions?.[0]).to.include({ status: 'False', reason: 'RollingOut', observedGeneration: 3 });
    const ready = desiredStatus({
      site: site(3, rolling),
      children: rollout(deployment(2, 2, { ...READY, observedGeneration: 2 })),
      url,
      now: T1,
    });
    expect(ready).to.deep.equal({
      observedGeneration: 3,
      readyReplicas: 2,
      url,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          observedGeneration: 3,
          lastTransitionTime: T1,
          reason: 'Available',
          message: 'deployment "shop" successfully rolled out',
        },
        {
          type: 'Progressing',
          status: 'False',
          observedGeneration: 3,
          lastTransitionTime: T1,
          reason: 'Available',
          message: 'deployment "shop" successfully rolled out',
        },
        {
          type: 'Degraded',
          status: 'False',
          observedGeneration: 3,
          // Degraded was False while rolling out too: it did not flip.
          lastTransitionTime: T0,
          reason: 'AsExpected',
          message: '',
        },
      ],
    });
  });

  it('Progressing while the rollout is under way; Degraded, not Progressing, when something stops it', () => {
    const conditions = (status: ReturnType<typeof desiredStatus>) =>
      Object.fromEntries((status.conditions ?? []).map((c) => [c.type, `${c.status} ${c.reason}`]));
    const rolling = desiredStatus({
      site: site(1),
      children: rollout(deployment(1, 2, { ...READY, availableReplicas: 1 })),
      url,
      now: T0,
    });
    expect(conditions(rolling)).to.deep.equal({
      Ready: 'False PodsNotReady',
      Progressing: 'True PodsNotReady',
      Degraded: 'False AsExpected',
    });
    const stuck = desiredStatus({
      site: site(1, rolling),
      children: rollout(
        deployment(1, 2, {
          ...READY,
          availableReplicas: 0,
          conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
        }),
      ),
      url,
      now: T1,
    });
    expect(conditions(stuck)).to.deep.equal({
      Ready: 'False ProgressDeadlineExceeded',
      Progressing: 'False ProgressDeadlineExceeded',
      Degraded: 'True ProgressDeadlineExceeded',
    });
    const flipped = Object.fromEntries((stuck.conditions ?? []).map((c) => [c.type, c.lastTransitionTime]));
    expect(flipped).to.deep.equal({ Ready: T0, Progressing: T1, Degraded: T1 });
    const failed = desiredStatus({
      site: site(1),
      children: rollout(deployment(1, 2, READY)),
      problem: { status: 'False', reason: 'RecordFailed', message: 'publishing the record failed: EACCES' },
      url,
      now: T0,
    });
    expect(failed.conditions?.find((c) => c.type === 'Degraded')).to.include({
      status: 'True',
      reason: 'RecordFailed',
      message: 'publishing the record failed: EACCES',
    });
  });

  it('keeps lastTransitionTime while the status stays, even when reason and message change', () => {
    const first = desiredStatus({
      site: site(1),
      children: rollout(deployment(1, 2, { ...READY, updatedReplicas: 0 })),
      url,
      now: T0,
    });
    const second = desiredStatus({
      site: site(1, first),
      children: rollout(deployment(1, 2, { ...READY, availableReplicas: 1 })),
      url,
      now: T1,
    });
    expect(second.conditions?.[0]).to.include({ lastTransitionTime: T0, reason: 'PodsNotReady' });
  });

  it('a problem overrides the rollout and reads as given', () => {
    const status = desiredStatus({
      site: site(1),
      children: rollout(deployment(1, 2, READY)),
      problem: { status: 'False', reason: 'ChildConflict', message: 'ConfigMap "shop" already exists' },
      url,
      now: T0,
    });
    expect(status.conditions?.[0]).to.include({ status: 'False', reason: 'ChildConflict' });
    expect(status).not.to.have.property('observedGeneration');
  });

  it('repairs a tampered observedGeneration that runs ahead of the generation', () => {
    const status = desiredStatus({
      site: site(2, { observedGeneration: 99 }),
      children: rollout(deployment(1, 2, { ...READY, availableReplicas: 0 })),
      url,
      now: T0,
    });
    expect(status.observedGeneration).to.equal(2);
  });

  it('statusUnchanged compares structurally', () => {
    const status = desiredStatus({ site: site(1), children: rollout(deployment(1, 2, READY)), url, now: T0 });
    expect(statusUnchanged(structuredClone(status), status)).to.equal(true);
    expect(statusUnchanged({ ...status, readyReplicas: 1 }, status)).to.equal(false);
    expect(statusUnchanged(undefined, status)).to.equal(false);
  });
});
