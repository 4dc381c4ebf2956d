/**
 * One phase of the upgrade drill: the system moved from one release to another (`apply`) while the
 * two clients run (traffic.ts), then everything the issue asks of a rollout, counted from the API
 * server, the audit log, the gateway or Services, and DNS or the record store. The real-node test and
 * bench/upgrade-drill.ts (with Helm) both run it.
 */
import { LEASE_NAME } from '../../../controller/manager.ts';
import type { ControlPlane } from '../../../devenv/controlplane.ts';
import { eventually } from '../../../devenv/crds.ts';
import { leadershipWindows, overlappingSiteWrites, writesOutsideLeadership } from '../history/index.ts';
import { controllerHistory } from './audit.ts';
import { childSnapshot, childWrites } from './children.ts';
import { startTraffic, type TrafficOptions, type TrafficReport } from './traffic.ts';

const SYSTEM = 'staticsite-system';

export interface PhaseOptions extends Omit<TrafficOptions, 'admin'> {
  cp: ControlPlane;
  /** Moves the system to the other release and waits for its rollouts. */
  apply: () => Promise<void>;
  /** Writes of the controller before this are not checked (Lease writes always count). */
  auditSince: number;
  /** The sites have HTTPRoutes (a gateway is configured). */
  routes: boolean;
  /** What the record store still holds for a deleted site: DNS answers, files; [] when nothing. */
  recordOf: (name: string) => Promise<string[]>;
}

/** The images of the system's running pods that are not terminating. */
async function systemImages(cp: ControlPlane): Promise<string[]> {
  const pods = await cp.admin.get<{
    items: Array<{
      metadata: { deletionTimestamp?: string };
      spec: { containers: Array<{ image: string }> };
      status: { phase: string };
    }>;
  }>(`/api/v1/namespaces/${SYSTEM}/pods`);
  // Not the finished one-off pods of other tests (the certificate renewal).
  const live = pods.body.items.filter((p) => !p.metadata.deletionTimestamp && p.status.phase === 'Running');
  return [...new Set(live.flatMap((p) => p.spec.containers.map((c) => c.image)))];
}

/** Runs the traffic around `apply`, a few rounds more on the new release alone, and stops it. */
async function trafficAround(options: PhaseOptions): Promise<{ report: TrafficReport; from: number; to: number }> {
  const { cp, apply } = options;
  const from = Date.now();
  const clients = startTraffic({ ...options, admin: cp.admin });
  let report: TrafficReport;
  try {
    await apply();
    await new Promise((r) => setTimeout(r, 3_000));
  } finally {
    report = await clients.stop();
  }
  return { report, from, to: Date.now() };
}

/** One phase and its counts. */
export async function rolloutUnderTraffic(options: PhaseOptions) {
  const { cp, namespace, steady } = options;
  const names = steady.map((s) => s.name);
  const before = await childSnapshot(cp.admin, namespace, names, { routes: options.routes });
  const { report, from, to } = await trafficAround(options);
  const sites = `/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`;
  await eventually(
    'every churned site deleted',
    async () => {
      const left = await Promise.all(report.churned.map((n) => cp.admin.get(`${sites}/${n}`)));
      return left.every((r) => r.status === 404);
    },
    120_000,
  );
  const leftRecords: string[] = [];
  for (const name of report.churned) {
    const left = await options.recordOf(name);
    if (left.length > 0) leftRecords.push(`${name}: ${left.join(',')}`);
  }
  const after = await childSnapshot(cp.admin, namespace, names, { routes: options.routes });
  const history = await controllerHistory(cp.auditLogPath, options.auditSince);
  const inSpan = history.replicas.flatMap((r) => r.requests.filter((q) => q.at >= from && q.at <= to));
  return {
    report,
    leftRecords,
    writes: childWrites({ history, namespace, before, after, from, to }),
    children: before.size,
    terms: leadershipWindows(history, LEASE_NAME, SYSTEM).filter((w) => w.until > from),
    twoLeaders: [
      ...writesOutsideLeadership(history, { leaseNamespace: SYSTEM, leaseFor: () => LEASE_NAME }),
      ...overlappingSiteWrites(history),
    ].map((v) => `${v.rule} ${v.replica}: ${v.detail}`),
    images: await systemImages(cp),
    controllerWrites: inSpan.length,
    ms: to - from,
  };
}

export type PhaseOutcome = Awaited<ReturnType<typeof rolloutUnderTraffic>>;

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** The counts in one line, for a test title or a report. */
export function phaseSummary(o: PhaseOutcome): string {
  const admission = Object.entries(o.report.admission).map(([k, n]) => `${k} ${n}`);
  return [
    `${o.ms} ms`,
    admission.join(', '),
    `${o.report.gets} GETs, ${o.report.lookups} lookups`,
    `${o.report.churned.length} sites churned`,
    `children: ${sum(o.writes.writes)} writes, ${o.writes.changed.length} changed of ${o.children}`,
    `${sum(o.writes.statusWrites)} status writes`,
    `${o.controllerWrites} controller writes audited`,
    `${o.terms.length} leader terms`,
  ].join('; ');
}

/** What went wrong in a phase, by check: empty when every check holds. */
export function phaseProblems(o: PhaseOutcome, image: string): Record<string, string[]> {
  const problems: Record<string, string[]> = {
    'admission answers other than success or a rule': o.report.admissionFailures,
    'failed GETs of steady sites': o.report.getFailures,
    'steady sites missing from DNS': o.report.lookupFailures,
    'records of deleted sites left': o.leftRecords,
    'child writes that changed nothing, or repeated one change': o.writes.needless,
    'two leaders': o.twoLeaders,
    'the images the system pods run': o.images.length === 1 && o.images[0] === image ? [] : o.images,
    // The churned sites' children were created: the audit log did record the controller's writes.
    'no controller write in the audit log': o.controllerWrites > 0 ? [] : ['none'],
    'no site churned': o.report.churned.length > 0 ? [] : ['none'],
    'no duplicate hostname refused': o.report.admission['create denied: duplicate hostname (webhook)'] ? [] : ['none'],
    // Both releases' replicas led: the rollout did hand over.
    'one leader throughout': new Set(o.terms.map((w) => w.replica)).size > 1 ? [] : o.terms.map((w) => w.replica),
  };
  return Object.fromEntries(Object.entries(problems).filter(([, found]) => found.length > 0));
}
