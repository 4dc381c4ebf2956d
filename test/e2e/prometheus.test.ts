import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump, load } from 'js-yaml';
import { eventually } from '../../devenv/crds.ts';
import { LOCAL_PORTS, LocalSystem } from '../../devenv/local-system.ts';
import { metricsReaderToken } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;

interface RuleGroup {
  name: string;
  rules: Array<{ alert?: string; record?: string; expr: string }>;
}

/** The PrometheusRule's groups, as a Prometheus rule file. */
function ruleGroups(): RuleGroup[] {
  const rule = load(readFileSync(`${repoRoot}manifests/prometheus/prometheus-rule.yaml`, 'utf8')) as {
    spec: { groups: unknown };
  };
  return rule.spec.groups as RuleGroup[];
}

/** The ServiceMonitor's one endpoint, as the Prometheus Operator turns it into a scrape config. */
function serviceMonitorEndpoint(): {
  scheme: string;
  bearerTokenFile?: string;
  tlsConfig?: { insecureSkipVerify?: boolean };
} {
  const monitor = load(readFileSync(`${repoRoot}manifests/prometheus/service-monitor.yaml`, 'utf8')) as {
    spec: { endpoints: ReturnType<typeof serviceMonitorEndpoint>[] };
  };
  return monitor.spec.endpoints[0] as ReturnType<typeof serviceMonitorEndpoint>;
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(
    readFileSync(`${repoRoot}manifests/prometheus/dashboards/staticsite-operator.json`, 'utf8'),
  ) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
]);

/**
 * The metric names an expression selects: every identifier that is not a function (followed by `(`),
 * a keyword, or inside label matchers, grouping clauses, ranges or strings.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w:.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(?!\s*\()/g)) {
    const name = match[1] as string;
    if (!PROMQL_WORDS.has(name)) names.add(name);
  }
  return [...names];
}

/** Prometheus's HTTP API, answering `data` or throwing with Prometheus's error. */
async function api<T>(port: number, path: string): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  const body = (await response.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error}`);
  return body.data;
}

function requireBinary(name: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  if (!found) throw new Error(`${name} is missing: apt-get install prometheus (Debian's package has both binaries)`);
}

describe("e2e: monitoring (manifests/prometheus) with Debian's promtool and a real Prometheus", function () {
  this.timeout(300_000);
  let dir: string;

  before(async () => {
    requireBinary('promtool');
    requireBinary('prometheus');
    dir = await mkdtemp(join(tmpdir(), 'staticsite-prometheus-'));
    await writeFile(join(dir, 'rules.yaml'), dump({ groups: ruleGroups() }));
    await copyFile(`${repoRoot}test/prometheus/rules.test.yaml`, join(dir, 'rules.test.yaml'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("promtool accepts the PrometheusRule's rules and their unit tests pass", () => {
    const check = spawnSync('promtool', ['check', 'rules', join(dir, 'rules.yaml')], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).to.equal(0);
    const test = spawnSync('promtool', ['test', 'rules', join(dir, 'rules.test.yaml')], { encoding: 'utf8' });
    expect(test.status, test.stdout + test.stderr).to.equal(0);
    // Every alert has a test case that makes it fire.
    const tested = readFileSync(`${repoRoot}test/prometheus/rules.test.yaml`, 'utf8');
    for (const rule of ruleGroups().flatMap((g) => g.rules)) {
      expect(tested, `a test for ${rule.alert}`).to.match(
        new RegExp(`alertname: ${rule.alert}\\n\\s+exp_alerts:\\n\\s+- `),
      );
    }
  });

  it('the ServiceMonitor scrapes secure metrics: HTTPS, the service account token', () => {
    expect(serviceMonitorEndpoint()).to.deep.include({
      scheme: 'https',
      bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      tlsConfig: { insecureSkipVerify: true },
    });
  });

  describe('a real Prometheus scraping the local system', () => {
    const system = new LocalSystem();
    let prometheus: ChildProcess | undefined;
    let port: number;
    const jobs = {
      'staticsite-webhook-metrics': LOCAL_PORTS.webhookMetrics,
      'staticsite-controller-metrics': LOCAL_PORTS.controllerMetrics,
      'staticsite-certs-metrics': LOCAL_PORTS.certsMetrics,
    };

    before(async () => {
      await system.start();
      // Traffic for every process: a site through both webhooks and the controller.
      await system.controlPlane.ensureNamespace('monitored');
      const created = await system.controlPlane.admin.post('/apis/staticsite.dev/v1/namespaces/monitored/staticsites', {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'watched' },
        spec: { content: '<h1>watched</h1>', replicas: 1 },
      });
      expect(created.status, created.text).to.equal(201);
      port = await freePort();
      // Secure metrics, scraped as the ServiceMonitor scrapes them: HTTPS without verifying the
      // processes' self-signed certificates, a token bound to staticsite-metrics-reader.
      await writeFile(join(dir, 'token'), await metricsReaderToken(system.controlPlane), { mode: 0o600 });
      // The job names are those the ServiceMonitor gives (the Services' names), as the rules and the dashboard expect.
      await writeFile(
        join(dir, 'prometheus.yml'),
        dump({
          global: { scrape_interval: '1s', evaluation_interval: '1s' },
          rule_files: [join(dir, 'rules.yaml')],
          scrape_configs: Object.entries(jobs).map(([job, target]) => ({
            job_name: job,
            // The ServiceMonitor's endpoint settings, as the Operator writes them into the config.
            scheme: serviceMonitorEndpoint().scheme,
            authorization: { credentials_file: join(dir, 'token') },
            tls_config: { insecure_skip_verify: serviceMonitorEndpoint().tlsConfig?.insecureSkipVerify ?? false },
            static_configs: [{ targets: [`127.0.0.1:${target}`] }],
          })),
        }),
      );
      prometheus = spawn(
        'prometheus',
        [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let log = '';
      prometheus.stderr?.on('data', (chunk: Buffer) => {
        log = (log + chunk.toString()).slice(-4000);
      });
      await eventually(
        'Prometheus scrapes all three processes',
        async () => {
          if (prometheus?.exitCode !== null) throw new Error(`prometheus exited: ${log}`);
          const targets = await api<{ activeTargets: Array<{ health: string; labels: { job: string } }> }>(
            port,
            '/api/v1/targets',
          ).catch(() => ({ activeTargets: [] }));
          return targets.activeTargets.length === 3 && targets.activeTargets.every((t) => t.health === 'up');
        },
        60_000,
        500,
      );
    });
    after(async () => {
      prometheus?.kill('SIGTERM');
      await system.stop();
    });

    it('every alert rule evaluates without error', async () => {
      const groups = await eventually(
        'every rule evaluated',
        async () => {
          const data = await api<{
            groups: Array<{
              rules: Array<{ name: string; health: string; lastError?: string; lastEvaluation: string }>;
            }>;
          }>(port, '/api/v1/rules');
          const rules = data.groups.flatMap((g) => g.rules);
          return rules.every((r) => !r.lastEvaluation.startsWith('0001')) ? rules : undefined;
        },
        30_000,
        500,
      );
      expect(groups.map((r) => r.name)).to.deep.equal(ruleGroups().flatMap((g) => g.rules.map((r) => r.alert)));
      for (const rule of groups) expect(rule.health, `${rule.name}: ${rule.lastError}`).to.equal('ok');
    });

    it('every metric the rules and the dashboard select is scraped from the processes', async () => {
      const scraped = new Set(await api<string[]>(port, '/api/v1/label/__name__/values'));
      const used = new Set(
        [...ruleGroups().flatMap((g) => g.rules.map((r) => r.expr)), ...dashboardExpressions()].flatMap(metricNames),
      );
      expect(used.size).to.be.greaterThan(15);
      const missing = [...used].filter((name) => !scraped.has(name));
      expect(missing, 'selected but never scraped').to.deep.equal([]);
    });

    it("every dashboard panel's query returns data", async () => {
      // Rates need two samples in their window: wait for a few scrapes of the site's traffic.
      for (const expr of dashboardExpressions()) {
        const result = await eventually(
          `data for ${expr}`,
          async () => {
            const data = await api<{ result: unknown[] }>(port, `/api/v1/query?query=${encodeURIComponent(expr)}`);
            return data.result.length > 0 ? data.result : undefined;
          },
          30_000,
          500,
        );
        expect(result.length, expr).to.be.greaterThan(0);
      }
    });

    it('a process that stops makes its target-down alert pending, with the job the ServiceMonitor would give', async () => {
      await system.stopProcess('certs');
      const alert = await eventually(
        'StaticSiteOperatorTargetDown pending',
        async () => {
          const { alerts } = await api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>(
            port,
            '/api/v1/alerts',
          );
          return alerts.find((a) => a.labels.alertname === 'StaticSiteOperatorTargetDown');
        },
        30_000,
        500,
      );
      expect(alert.state).to.equal('pending'); // `for: 5m`: promtool's tests cover the firing
      expect(alert.labels).to.include({ job: 'staticsite-certs-metrics', severity: 'warning' });
    });
  });
});
