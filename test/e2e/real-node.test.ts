/**
 * `kubectl apply -k manifests` (the base, unchanged) on a control plane with a real node: the
 * kubelet, kube-proxy and containerd on this machine run our image and the site image as real,
 * non-privileged pods. The Deployments roll out with the shipped securityContexts, the cert
 * bootstrapper pod injects the CA, the API server calls the webhook pods through their Service,
 * and a StaticSite in a namespace that enforces the `restricted` Pod Security Standard gets nginx
 * pods whose Service serves its HTML to the host.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { packageFile } from '../../cli/package-root.ts';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually } from '../../devenv/crds.ts';
import { BindServer } from '../../devenv/dns/bind.ts';
import {
  installGatewayApiCrds,
  TRAEFIK_CONTROLLER_NAME,
  TRAEFIK_INGRESS_CONTROLLER,
  TraefikGateway,
  traefikGatewayObjects,
} from '../../devenv/gateway.ts';
import { metricsReaderToken, observe } from '../../devenv/observed.ts';
import { defaultRouteAddress, getOnce, RealNode, realNodeImages } from '../../devenv/real-node.ts';
import { releaseImage } from '../../devenv/release/image.ts';
import { lastReleaseTree, type ReleaseTree } from '../../devenv/release/tree.ts';
import { buildImages, operatorImage } from '../support/docker.ts';
import { CONTROLLER_AUDIT_POLICY } from '../support/upgrade-drill/audit.ts';
import { phaseProblems, phaseSummary, rolloutUnderTraffic } from '../support/upgrade-drill/phase.ts';
import type { SteadySite } from '../support/upgrade-drill/traffic.ts';

const run = promisify(execFile);
const NS = 'web';
const SYSTEM = 'staticsite-system';
const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

interface PodSpec {
  containers: Array<{ args?: string[]; readinessProbe?: unknown; livenessProbe?: unknown }>;
  [key: string]: unknown;
}

interface Site {
  metadata: { finalizers?: string[]; generation?: number };
  status?: {
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

/** A merge patch of a site's content, as a user's edit. */
async function editContent(cp: ControlPlane, sitePath: string, html: string): Promise<void> {
  const patched = await cp.admin.patch(
    sitePath,
    { spec: { content: html } },
    { contentType: 'application/merge-patch+json' },
  );
  expect(patched.status, patched.text).to.equal(200);
}

/** `kubectl rollout status` of a Deployment of the system's namespace. */
async function rolledOut(cp: ControlPlane, deployment: string): Promise<void> {
  const rollout = await cp.kubectl(['-n', SYSTEM, 'rollout', 'status', `deployment/${deployment}`, '--timeout=240s']);
  expect(rollout.code, `${rollout.stdout}${rollout.stderr}`).to.equal(0);
}

/** The external records the controller pods wrote, read from their emptyDir volumes on the node. */
async function recordFiles(node: RealNode): Promise<string[]> {
  return (await node.emptyDirFiles('records')).map((f) => f.path);
}

/** What a failed test here needs to be explained: the pods, the webhook's endpoints, the node's logs. */
async function nodeDiagnostics(cp: ControlPlane, node: RealNode): Promise<string> {
  const kubectl = async (...args: string[]) => {
    const out = await cp.kubectl(args);
    return `$ kubectl ${args.join(' ')}\n${out.stdout}${out.stderr}`;
  };
  const tail = async (name: string) => {
    const text = await readFile(node.logPath(name), 'utf8').catch((error: Error) => error.message);
    return `--- the last 40 lines of ${name}.log\n${text.split('\n').slice(-41).join('\n')}`;
  };
  const parts = [
    await kubectl('get', 'pods', '-A', '-o', 'wide'),
    await kubectl('get', 'endpointslices', '-n', SYSTEM, '-o', 'wide'),
    await kubectl('get', 'events', '-n', SYSTEM, '--sort-by=.lastTimestamp'),
    await tail('kube-proxy'),
    await tail('kubelet'),
    await run('iptables-save', ['-t', 'nat'])
      .then(({ stdout }) => stdout.split('\n').filter((line) => line.includes(SYSTEM)))
      .then((lines) => `--- kube-proxy's nat rules for ${SYSTEM}\n${lines.join('\n')}`)
      .catch((error: Error) => `iptables-save: ${error.message}`),
  ];
  return `real node diagnostics:\n${parts.join('\n')}`;
}

describe('e2e: kubectl apply -k manifests on a real node (kubelet, kube-proxy, containerd)', function () {
  this.timeout(300_000);
  let cp: ControlPlane;
  let node: RealNode;

  before(async function () {
    this.timeout(45 * 60_000);
    const image = await buildImages();
    expect(image).to.equal(operatorImage());
    // The audit log records the controller pods' writes for the upgrade drill's checks.
    cp = await new ControlPlane({ nodeAddress: defaultRouteAddress(), auditPolicy: CONTROLLER_AUDIT_POLICY }).start();
    // Our image, and the local build of the unprivileged nginx under the name the controller asks for.
    node = await RealNode.start({ controlPlane: cp, images: realNodeImages() });
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !cp || !node) return;
    console.error(await nodeDiagnostics(cp, node));
  });

  after(async function () {
    this.timeout(180_000);
    await node?.stop();
    await cp?.stop();
  });

  it('kubectl apply -k manifests: the three Deployments roll out with the shipped securityContexts', async () => {
    const applied = await cp.kubectl(['apply', '-k', packageFile('manifests')]);
    expect(applied.code, applied.stderr).to.equal(0);
    const rollout = await cp.kubectl([
      '-n',
      SYSTEM,
      'rollout',
      'status',
      'deployment/staticsite-certs',
      'deployment/staticsite-webhook',
      'deployment/staticsite-controller',
      '--timeout=240s',
    ]);
    expect(rollout.code, `${rollout.stdout}${rollout.stderr}`).to.equal(0);
    const pods = await cp.admin.get<{
      items: Array<{
        spec: { nodeName?: string; securityContext?: { runAsNonRoot?: boolean } };
        status: { phase: string };
      }>;
    }>(`/api/v1/namespaces/${SYSTEM}/pods`);
    const running = pods.body.items.filter((p) => p.status.phase === 'Running');
    expect(running.length).to.equal(5);
    for (const pod of running) {
      expect(pod.spec.nodeName).to.equal(node.name);
      expect(pod.spec.securityContext?.runAsNonRoot).to.equal(true);
    }
  });

  it('the cert bootstrapper pod injected the CA and the API server calls the webhook pods through the Service', async function () {
    const config = await cp.admin.get<{ webhooks: Array<{ clientConfig: { caBundle?: string; service?: unknown } }> }>(
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/staticsite-webhook',
    );
    expect(config.body.webhooks[0]?.clientConfig.service).to.not.equal(undefined);
    expect(Buffer.from(config.body.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString()).to.include(
      'BEGIN CERTIFICATE',
    );
    await cp.ensureNamespace(NS);
    // A finished rollout does not mean kube-proxy routes the Service yet: its rules follow the
    // EndpointSlice a sync later, and until then the API server's dial is refused.
    const started = Date.now();
    let last = '';
    const dryRun = await eventually(
      'a dry-run create admitted through the webhook Service',
      async () => {
        const res = await cp.admin.post<Site>(
          sites,
          { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'probe' }, spec: { content: 'x' } },
          { query: { dryRun: 'All' } },
        );
        last = res.text;
        return res.status === 201 ? res : undefined;
      },
      60_000,
      500,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last answer: ${last}`);
    });
    if (this.test) this.test.title += ` [routed ${Date.now() - started} ms after the rollout]`;
    // The finalizer comes only from the mutating webhook: its presence proves the call went through.
    expect(dryRun.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
  });

  describe('a StaticSite in a namespace that enforces the restricted Pod Security Standard', () => {
    let clusterIp = '';

    before(async () => {
      const labelled = await cp.admin.patch(
        `/api/v1/namespaces/${NS}`,
        { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(labelled.status, labelled.text).to.equal(200);
    });

    it('gets real nginx pods, and a GET on its Service from the host returns its HTML', async () => {
      const created = await cp.admin.post<Site>(sites, {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'shop' },
        spec: { content: '<h1>shop v1</h1>', replicas: 2 },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await eventually(
        'the site Ready',
        async () => {
          const site = await cp.admin.get<Site>(`${sites}/shop`);
          return site.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        },
        180_000,
      );
      const service = await cp.admin.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${NS}/services/shop`);
      clusterIp = service.body.spec.clusterIP;
      const body = await eventually(
        'the Service serving',
        async () => {
          const res = await getOnce(`http://${clusterIp}/`).catch(() => undefined);
          return res?.status === 200 ? res.body : undefined;
        },
        30_000,
      );
      expect(body).to.equal('<h1>shop v1</h1>');
      const records = await recordFiles(node);
      const record = records.find((f) => f.endsWith(`${NS}_shop.json`));
      expect(record, records.join(', ')).to.not.equal(undefined);
      expect(JSON.parse(await readFile(record ?? '', 'utf8'))).to.deep.include({
        service: `shop.${NS}.svc.cluster.local`,
      });
    });

    it('serves edited content within 30 s', async () => {
      await editContent(cp, `${sites}/shop`, '<h1>shop v2</h1>');
      const started = Date.now();
      await eventually(
        'the new HTML served',
        async () => {
          const res = await getOnce(`http://${clusterIp}/`).catch(() => undefined);
          return res?.status === 200 && res.body === '<h1>shop v2</h1>';
        },
        30_000,
      );
      expect(Date.now() - started).to.be.lessThan(30_000);
    });

    it('deleting the site removes its record and its children', async () => {
      const deleted = await cp.admin.delete(`${sites}/shop`);
      expect([200, 202]).to.include(deleted.status);
      await eventually(
        'the site, its children and its record gone',
        async () => {
          const [site, deployment, service, configMap] = await Promise.all([
            cp.admin.get(`${sites}/shop`),
            cp.admin.get(`/apis/apps/v1/namespaces/${NS}/deployments/shop`),
            cp.admin.get(`/api/v1/namespaces/${NS}/services/shop`),
            cp.admin.get(`/api/v1/namespaces/${NS}/configmaps/shop`),
          ]);
          const records = (await recordFiles(node)).filter((f) => f.endsWith(`${NS}_shop.json`));
          return [site, deployment, service, configMap].every((r) => r.status === 404) && records.length === 0;
        },
        120_000,
      );
    });
  });
  describe('drills on real pods', () => {
    const DRILL_NS = 'drill';
    const drillSites = `/apis/staticsite.dev/v1/namespaces/${DRILL_NS}/staticsites`;

    before(async () => {
      await cp.ensureNamespace(DRILL_NS);
    });

    async function podsOf(app: string) {
      const pods = await cp.admin.get<{
        items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { phase: string } }>;
      }>(`/api/v1/namespaces/${SYSTEM}/pods?labelSelector=app.kubernetes.io/name=${app}`);
      return pods.body.items.filter((p) => !p.metadata.deletionTimestamp);
    }

    it('deleting a webhook pod during 200 creates fails none of them', async () => {
      const victim = (await podsOf('staticsite-webhook'))[0]?.metadata.name;
      expect(victim).to.be.a('string');
      const statuses: number[] = [];
      const failures: string[] = [];
      let next = 0;
      let deleted: Promise<unknown> | undefined;
      // Dry-run creates: the whole admission path (both webhooks) without 200 sites' pods.
      const worker = async () => {
        while (next < 200) {
          const i = next++;
          if (i === 40) deleted = cp.admin.delete(`/api/v1/namespaces/${SYSTEM}/pods/${victim}`);
          const res = await cp.admin.post(
            drillSites,
            {
              apiVersion: 'staticsite.dev/v1',
              kind: 'StaticSite',
              metadata: { name: `d-${i}` },
              spec: { content: `${i}` },
            },
            { query: { dryRun: 'All' } },
          );
          statuses.push(res.status);
          if (res.status !== 201) failures.push(`create ${i} (the pod deleted at 40): ${res.status} ${res.text}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      await deleted;
      expect(failures).to.deep.equal([]);
      expect(statuses.length).to.equal(200);
      await rolledOut(cp, 'staticsite-webhook');
    });

    it('killing the controller leader pod: the other takes over within the lease, with one record', async () => {
      const created = await cp.admin.post(drillSites, {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'leader-drill' },
        spec: { content: '<h1>before</h1>' },
      });
      expect(created.status).to.equal(201);
      const recordsOfSite = async () =>
        (await recordFiles(node)).filter((f) => f.endsWith(`${DRILL_NS}_leader-drill.json`));
      await eventually('the record written', async () => (await recordsOfSite()).length === 1, 60_000);
      const lease = await cp.admin.get<{ spec: { holderIdentity: string; leaseDurationSeconds: number } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/staticsite-controller`,
      );
      const leader = (await podsOf('staticsite-controller')).find((p) =>
        lease.body.spec.holderIdentity.startsWith(`${p.metadata.name}_`),
      );
      expect(leader, lease.body.spec.holderIdentity).to.not.equal(undefined);
      const killed = Date.now();
      await cp.admin.delete(`/api/v1/namespaces/${SYSTEM}/pods/${leader?.metadata.name}`, {
        query: { gracePeriodSeconds: '0' },
      });
      const newHolder = await eventually(
        'another pod holds the lease',
        async () => {
          const now = await cp.admin.get<{ spec: { holderIdentity?: string } }>(
            `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/staticsite-controller`,
          );
          const holder = now.body.spec.holderIdentity ?? '';
          return holder !== '' && holder !== lease.body.spec.holderIdentity ? holder : undefined;
        },
        60_000,
      );
      const takeoverMs = Date.now() - killed;
      expect(newHolder.startsWith(`${leader?.metadata.name}_`)).to.equal(false);
      expect(takeoverMs).to.be.lessThan((lease.body.spec.leaseDurationSeconds + 5) * 1000);
      // The new leader reconciles the site: one record, in its own folder.
      const patched = await cp.admin.patch(`${drillSites}/leader-drill`, { spec: { content: '<h1>after</h1>' } });
      expect(patched.status).to.equal(200);
      await eventually(
        'the site Ready again under the new leader',
        async () => {
          const site = await cp.admin.get<Site>(`${drillSites}/leader-drill`);
          return (
            site.body.status?.observedGeneration === site.body.metadata.generation &&
            site.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          );
        },
        120_000,
      );
      expect(await recordsOfSite()).to.have.length(1);
      await rolledOut(cp, 'staticsite-controller');
      await cp.admin.delete(`${drillSites}/leader-drill`);
    });

    it('a serving certificate rotation while reviews flow fails none of them', async () => {
      // The serving pods: a pod of an earlier drill may still be terminating (its shutdown delay).
      const webhookPods = async () => {
        const pods = await cp.admin.get<{
          items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { podIP?: string } }>;
        }>(`/api/v1/namespaces/${SYSTEM}/pods?labelSelector=app.kubernetes.io/name=staticsite-webhook`);
        return pods.body.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.status.podIP ?? '');
      };
      const token = await metricsReaderToken(cp);
      const reloads = async (ip: string) => {
        const { text } = await observe(`https://${ip}:8080/metrics`, token);
        return Number(/^staticsite_webhook_certificate_reloads_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
      };
      const ips = await webhookPods();
      expect(ips).to.have.length(2);
      const before = await Promise.all(ips.map(reloads));
      const oldSecret = await cp.admin.get<{ data: Record<string, string> }>(
        `/api/v1/namespaces/${SYSTEM}/secrets/staticsite-webhook-tls`,
      );
      let flowing = true;
      const statuses: number[] = [];
      const worker = async (w: number) => {
        for (let i = 0; flowing; i++) {
          const res = await cp.admin.post(
            drillSites,
            {
              apiVersion: 'staticsite.dev/v1',
              kind: 'StaticSite',
              metadata: { name: `r-${w}-${i}` },
              spec: { content: 'x' },
            },
            { query: { dryRun: 'All' } },
          );
          statuses.push(res.status);
        }
      };
      const load = Promise.all([0, 1, 2, 3].map(worker));
      try {
        // A one-off run of the bootstrapper's own pod with --renew (what the README's troubleshooting
        // says to do): a new serving certificate from the same CA; the kubelet updates the Secret
        // volume and each webhook pod reloads it from disk.
        const deployment = await cp.admin.get<{ spec: { template: { spec: PodSpec } } }>(
          `/apis/apps/v1/namespaces/${SYSTEM}/deployments/staticsite-certs`,
        );
        const podSpec = structuredClone(deployment.body.spec.template.spec);
        for (const container of podSpec.containers) {
          container.args = [
            ...(container.args ?? []).filter((a) => a !== '--watch' && !a.startsWith('--metrics-port')),
            '--renew',
          ];
          delete container.readinessProbe;
          delete container.livenessProbe;
        }
        const renew = await cp.admin.post(`/api/v1/namespaces/${SYSTEM}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'staticsite-certs-renew' },
          spec: { ...podSpec, restartPolicy: 'Never' },
        });
        expect(renew.status, renew.text).to.equal(201);
        await eventually(
          'the renewal pod Succeeded',
          async () => {
            const pod = await cp.admin.get<{ status: { phase: string } }>(
              `/api/v1/namespaces/${SYSTEM}/pods/staticsite-certs-renew`,
            );
            if (pod.body.status.phase === 'Failed') throw new Error('the renewal pod failed');
            return pod.body.status.phase === 'Succeeded';
          },
          120_000,
        );
        await eventually(
          'both webhook pods serving the new certificate',
          async () => {
            const now = await Promise.all(ips.map(reloads));
            return now.every((n, i) => n > (before[i] ?? Number.POSITIVE_INFINITY));
          },
          180_000,
        );
      } finally {
        flowing = false;
        await load;
      }
      const newSecret = await cp.admin.get<{ data: Record<string, string> }>(
        `/api/v1/namespaces/${SYSTEM}/secrets/staticsite-webhook-tls`,
      );
      expect(newSecret.body.data['tls.crt']).to.not.equal(oldSecret.body.data['tls.crt']);
      expect(statuses.length).to.be.greaterThan(100);
      expect(statuses.filter((s) => s !== 201)).to.deep.equal([]);
    });
  });
  describe('through a Gateway (manifests/overlays/gateway) or an Ingress (manifests/overlays/ingress), Traefik serving them', () => {
    const GW_NS = 'gw';
    const gwSites = `/apis/staticsite.dev/v1/namespaces/${GW_NS}/staticsites`;
    const address = defaultRouteAddress();
    let traefik: TraefikGateway | undefined;
    /** The sites' zone, on the node's address: the controller pod publishes there, the test asks there. */
    const bind = new BindServer({ listenAddress: address });
    let withDns = '';

    /**
     * `kubectl apply -k` of an overlay with the records in DNS, as a user composes it: the overlay plus
     * the DNS component, its placeholder server replaced with the BIND on the node's address. `root`
     * is the tree whose manifests these are (another release's); `tag`, the operator image's tag.
     */
    const applyWithDns = async (overlay: string, release: { root?: string; tag?: string } = {}) => {
      const root = release.root ?? packageFile();
      const from = (...parts: string[]) => relative(withDns, join(root, ...parts));
      const images = release.tag ? `images: [{name: staticsite-operator, newTag: "${release.tag}"}]\n` : '';
      await writeFile(
        join(withDns, 'kustomization.yaml'),
        `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [${from('manifests', 'overlays', overlay)}]
components: [${from('manifests', 'components', 'dns-records')}]
${images}patches:
  - target: {kind: Deployment, name: staticsite-controller}
    patch: |-
      - {op: test, path: /spec/template/spec/containers/0/args/3, value: "--records=dns:10.96.0.53:53"}
      - {op: replace, path: /spec/template/spec/containers/0/args/3, value: "--records=dns:${address}:${bind.port}"}
`,
      );
      const composed = await cp.kubectl(['apply', '-k', withDns]);
      expect(composed.code, composed.stderr).to.equal(0);
      await rolledOut(cp, 'staticsite-controller');
    };
    /** The name's A records, asked of the zone's server at the node's address as a client outside would. */
    const resolve = (host: string) => bind.dig(host, 'A', address);

    /** Creates a site in GW_NS and waits until it is Ready; returns it with its hostname. */
    const readySite = async (name: string, html: string) => {
      const created = await cp.admin.post(gwSites, {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name },
        spec: { content: html },
      });
      expect(created.status, created.text).to.equal(201);
      const { site } = await eventually(
        `${name} Ready`,
        async () => {
          const now = await readyOf(name);
          return now.ready?.status === 'True' ? now : undefined;
        },
        180_000,
      );
      return { site, host: `${name}.${GW_NS}.sites.staticsite.dev` };
    };

    /** DNS answers `host` with Traefik's address, and a GET for `host` at that answer returns `html`. */
    const servedByItsName = async (host: string, html: string) => {
      const answer = await eventually('the A record', async () => (await resolve(host))[0], 30_000);
      expect(answer).to.equal(address);
      const served = await eventually(
        `${host} at ${answer}`,
        async () => {
          const res = await getOnce(`http://${answer}:${traefik?.httpPort}/`, 2_000, `${host}:${traefik?.httpPort}`);
          return res.status === 200 ? res.body : undefined;
        },
        30_000,
      );
      expect(served).to.equal(html);
    };

    /** GET / for `host` at the Gateway's address and port: `curl --resolve HOST:PORT:ADDRESS`. */
    const throughGateway = (host: string) =>
      getOnce(`http://${address}:${traefik?.httpPort}/`, 2_000, `${host}:${traefik?.httpPort}`).catch(() => undefined);
    const readyOf = async (name: string) => {
      const site = await cp.admin.get<Site & { status?: { url?: string } }>(`${gwSites}/${name}`);
      return { site: site.body, ready: site.body.status?.conditions?.find((c) => c.type === 'Ready') };
    };

    before(async function () {
      this.timeout(30 * 60_000);
      await installGatewayApiCrds(cp);
      traefik = await TraefikGateway.start({ kubeconfig: cp.kubeconfigPath, statusAddress: address, ingress: true });
      const port = traefik.httpPort;
      const gatewayObjects = traefikGatewayObjects({
        namespace: SYSTEM,
        name: 'public',
        port,
        hostname: '*.sites.staticsite.dev',
      });
      const created = await cp.kubectl(['apply', '-f', '-'], gatewayObjects);
      expect(created.code, created.stderr).to.equal(0);
      const programmed = await cp.kubectl([
        '-n',
        SYSTEM,
        'wait',
        '--for=condition=Programmed',
        'gateway/public',
        '--timeout=60s',
      ]);
      expect(programmed.code, `${programmed.stderr}\n${await traefik.tail()}`).to.equal(0);
      const overlay = await cp.kubectl(['apply', '-k', packageFile('manifests', 'overlays', 'gateway')]);
      expect(overlay.code, overlay.stderr).to.equal(0);
      await rolledOut(cp, 'staticsite-controller');
      // Then the records in DNS too.
      await bind.start();
      const secret = await cp.kubectl([
        '-n',
        SYSTEM,
        'create',
        'secret',
        'generic',
        'staticsite-dns-tsig',
        `--from-file=tsig.key=${bind.keyFile}`,
      ]);
      expect(secret.code, secret.stderr).to.equal(0);
      withDns = await mkdtemp(join(tmpdir(), 'gateway-dns-'));
      await applyWithDns('gateway');
      await cp.ensureNamespace(GW_NS);
    });

    afterEach(async function () {
      if (this.currentTest?.state === 'failed' && traefik) console.error(`traefik's log:\n${await traefik.tail(60)}`);
    });

    after(async function () {
      this.timeout(120_000);
      await traefik?.stop();
      await bind.dispose();
      if (withDns) await rm(withDns, { recursive: true, force: true });
    });

    it('the Gateway reports the address it serves on', async () => {
      const gateway = await cp.admin.get<{ status?: { addresses?: Array<{ type?: string; value: string }> } }>(
        `/apis/gateway.networking.k8s.io/v1/namespaces/${SYSTEM}/gateways/public`,
      );
      expect(gateway.body.status?.addresses).to.deep.equal([{ type: 'IPAddress', value: address }]);
    });

    it('a site is Ready with its URL once the Gateway accepts its route, and its hostname serves its HTML there', async () => {
      const { site, host } = await readySite('front', '<h1>front v1</h1>');
      expect(site.status?.url).to.equal(`http://${host}/`);
      const route = await cp.admin.get<{
        status?: { parents?: Array<{ controllerName: string; conditions: Array<{ type: string; status: string }> }> };
      }>(`/apis/gateway.networking.k8s.io/v1/namespaces/${GW_NS}/httproutes/front`);
      const parent = route.body.status?.parents?.[0];
      expect(parent?.controllerName).to.equal(TRAEFIK_CONTROLLER_NAME);
      expect(parent?.conditions.find((c) => c.type === 'Accepted')?.status).to.equal('True');
      const served = await eventually(
        'the page through the gateway',
        async () => {
          const res = await throughGateway(host);
          return res?.status === 200 ? res.body : undefined;
        },
        30_000,
      );
      expect(served).to.equal('<h1>front v1</h1>');
      // DNS answers the Gateway's address for the name, and the page is served at that answer.
      await servedByItsName(host, '<h1>front v1</h1>');
      // Another name at the same address is not this site.
      expect((await throughGateway(`nothing.${GW_NS}.sites.staticsite.dev`))?.status).to.equal(404);
    });

    it('edited content is served through the gateway', async () => {
      await editContent(cp, `${gwSites}/front`, '<h1>front v2</h1>');
      await eventually(
        'the new HTML through the gateway',
        async () => (await throughGateway(`front.${GW_NS}.sites.staticsite.dev`))?.body === '<h1>front v2</h1>',
        60_000,
      );
    });

    it("a route the Gateway refuses shows in Ready with the Gateway's reason, and no URL", async () => {
      // The listener takes *.sites.staticsite.dev only: a site of another domain has no listener.
      const created = await cp.admin.post(gwSites, {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'elsewhere' },
        spec: { content: '<h1>elsewhere</h1>', hostname: 'www.example.org' },
      });
      expect(created.status, created.text).to.equal(201);
      const { site, ready } = await eventually(
        'the site not Ready for its route',
        async () => {
          const now = await readyOf('elsewhere');
          return now.ready?.reason === 'RouteNotAccepted' ? now : undefined;
        },
        120_000,
      );
      expect(ready?.status).to.equal('False');
      expect(ready?.message).to.include('NoMatchingListenerHostname');
      expect(site.status?.url).to.equal(undefined);
      expect((await throughGateway('www.example.org'))?.status).to.equal(404);
    });

    it('deleting a site removes its route and its DNS name, and the gateway stops serving the name', async () => {
      for (const name of ['front', 'elsewhere']) {
        const deleted = await cp.admin.delete(`${gwSites}/${name}`);
        expect([200, 202]).to.include(deleted.status);
      }
      await eventually(
        'the sites and their routes gone, the name no longer served',
        async () => {
          const [site, route] = await Promise.all([
            cp.admin.get(`${gwSites}/front`),
            cp.admin.get(`/apis/gateway.networking.k8s.io/v1/namespaces/${GW_NS}/httproutes/front`),
          ]);
          const res = await throughGateway(`front.${GW_NS}.sites.staticsite.dev`);
          return site.status === 404 && route.status === 404 && res?.status === 404;
        },
        120_000,
      );
      expect(await resolve(`front.${GW_NS}.sites.staticsite.dev`)).to.deep.equal([]);
    });

    it('with --ingress-class instead (manifests/overlays/ingress): an Ingress per site, served, resolved, deleted', async () => {
      const ingressClass = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: public}
spec: {controller: ${TRAEFIK_INGRESS_CONTROLLER}}
`;
      const created = await cp.kubectl(['apply', '-f', '-'], ingressClass);
      expect(created.code, created.stderr).to.equal(0);
      await applyWithDns('ingress');
      const { site, host } = await readySite('back', '<h1>back</h1>');
      expect(site.status?.url).to.equal(`http://${host}/`);
      const ingresses = `/apis/networking.k8s.io/v1/namespaces/${GW_NS}/ingresses`;
      const ingress = await cp.admin.get<{ status?: unknown }>(`${ingresses}/back`);
      expect(ingress.body.status).to.deep.equal({ loadBalancer: { ingress: [{ ip: address }] } });
      await servedByItsName(host, '<h1>back</h1>');
      const deleted = await cp.admin.delete(`${gwSites}/back`);
      expect([200, 202]).to.include(deleted.status);
      await eventually(
        'the site and its Ingress gone, the name neither resolved nor served',
        async () => {
          const [gone, ing] = await Promise.all([cp.admin.get(`${gwSites}/back`), cp.admin.get(`${ingresses}/back`)]);
          const res = await throughGateway(host);
          return gone.status === 404 && ing.status === 404 && res?.status === 404;
        },
        120_000,
      );
      expect(await resolve(host)).to.deep.equal([]);
    });
    describe('upgrade and rollback drill (short form): the last release and the working tree, under traffic', () => {
      const DEPLOYMENTS = ['staticsite-certs', 'staticsite-webhook', 'staticsite-controller'];
      let release: ReleaseTree;
      /** The release's image as the node knows it: its own tag would name ours while the versions match. */
      let releaseTag = '';
      let drillStart = 0;
      const steady: SteadySite[] = [];

      /** kubectl apply -k of the gateway overlay with DNS, from `root`'s tree, then all three rolled out. */
      const install = async (target: { root?: string; tag?: string }) => {
        await applyWithDns('gateway', target);
        for (const deployment of DEPLOYMENTS) await rolledOut(cp, deployment);
      };

      before(async function () {
        this.timeout(40 * 60_000);
        const started = Date.now();
        const tree = lastReleaseTree();
        if (!tree) throw new Error('CHANGELOG.md names no released commit');
        release = tree;
        const built = await releaseImage(release);
        console.log(`  ${release.label}'s image ${built.how} in ${built.ms} ms`);
        releaseTag = `release-${release.commit.slice(0, 12)}`;
        await node.importImage({ source: built.image, names: [`staticsite-operator:${releaseTag}`] });
        drillStart = Date.now();
        await install({ root: release.dir, tag: releaseTag });
        const names = ['steady-a', 'steady-b', 'steady-c'];
        const ready = await Promise.all(names.map((name) => readySite(name, `<h1>${name}</h1>`)));
        steady.push(...names.map((name, i) => ({ name, host: ready[i]?.host ?? '', html: `<h1>${name}</h1>` })));
        await Promise.all(steady.map((site) => servedByItsName(site.host, site.html)));
        console.log(`  ${release.label} installed with ${steady.length} sites served in ${Date.now() - started} ms`);
      });

      /** Moves the system with `apply` while both clients run, and counts what the issue asks of a rollout. */
      const underTraffic = (prefix: string, apply: () => Promise<void>) =>
        rolloutUnderTraffic({
          cp,
          namespace: GW_NS,
          prefix,
          steady,
          get: async (host) => throughGateway(host),
          resolve,
          address,
          apply,
          auditSince: drillStart,
          routes: true,
          recordOf: (name) => resolve(`${name}.${GW_NS}.sites.staticsite.dev`),
        });

      it('kubectl apply -k of the working tree: no admission failed, no GET failed, no record lost, no needless child write, one leader at a time', async function () {
        const outcome = await underTraffic('up', () => install({}));
        if (this.test) this.test.title += ` [${phaseSummary(outcome)}]`;
        expect(phaseProblems(outcome, operatorImage())).to.deep.equal({});
      });

      it('kubectl apply -k of the release again (rollback): the same checks', async function () {
        const outcome = await underTraffic('down', () => install({ root: release.dir, tag: releaseTag }));
        if (this.test) this.test.title += ` [${phaseSummary(outcome)}]`;
        expect(phaseProblems(outcome, `staticsite-operator:${releaseTag}`)).to.deep.equal({});
      });
    });
  });
});
