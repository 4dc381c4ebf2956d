import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { BindAddress } from './bind-address.ts';
import type { MetricsDecision } from './metrics-auth.ts';

/**
 * What one check found: ok, or the reason it fails. As the API server does, the HTTP answer
 * withholds the reason (`reason withheld`: the probe port is open to anyone in the cluster) and the
 * log has it. A `note` is a public remark, a fixed text that reveals nothing (for example that a
 * rule is off, or what is missing); `?verbose` and every failing answer list it as a `warn:` line,
 * the form the API server uses for its own remarks after the check lines.
 */
export type CheckResult = { ok: true; note?: string } | { ok: false; reason: string; note?: string };

/** A named check, as in k8s.io/apiserver's healthz.HealthChecker. Readiness and liveness are lists of these. */
export interface Check {
  /** Shown as `[+]<name> ok` or `[-]<name> failed: reason withheld`; `?exclude=<name>` skips it. */
  readonly name: string;
  /** Runs on every request. A throw is a bug, not a failing check: the request fails with a 500. */
  check(): CheckResult;
}

/** The check that always passes, installed when a probe has no checks (healthz.PingHealthz). */
export const PING: Check = { name: 'ping', check: () => ({ ok: true }) };

export type ProbeName = 'healthz' | 'livez' | 'readyz';

export interface ProbeChecks {
  /** `/healthz` and `/livez`: the process is alive (failing restarts it). None: ping. */
  live?: readonly Check[];
  /** `/readyz`: the process should get traffic. None: ping. */
  ready?: readonly Check[];
}

export interface ProbeAnswer {
  status: 200 | 400 | 500;
  headers: Record<string, string>;
  body: string;
}

export type ProbeLogger = Pick<Logger, 'info' | 'warn'>;

const HEADERS = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' };

/** Go's %q for a check name (names are plain ASCII; JSON quoting agrees with Go's there). */
const quoted = (names: Iterable<string>) => [...names].map((name) => JSON.stringify(name)).join(',');

/**
 * `/healthz`, `/livez` and `/readyz` answered as k8s.io/apiserver/pkg/server/healthz answers them:
 * `ok` with 200 when every check passes; with `?verbose` one line per check and `<probe> check
 * passed`; when a check fails, always every line and `<probe> check failed`, with 500. `?exclude=`
 * skips a check by name. A change of the failing checks (with their reasons) or of the notes is
 * logged once, not on every probe.
 */
export class Probes {
  private readonly checks: Record<ProbeName, readonly Check[]>;
  private readonly logger: ProbeLogger | undefined;
  private readonly lastLogged = new Map<ProbeName, string>();

  constructor(checks: ProbeChecks, logger?: ProbeLogger) {
    const orPing = (list: readonly Check[] | undefined) => (list && list.length > 0 ? list : [PING]);
    const live = orPing(checks.live);
    this.checks = { healthz: live, livez: live, readyz: orPing(checks.ready) };
    this.logger = logger;
  }

  /** The answer to a GET of `url` when its path is `/healthz`, `/livez` or `/readyz`; otherwise undefined. */
  answer(url: string): ProbeAnswer | undefined {
    const target = parseRequestTarget(url);
    if (!target) return { status: 400, headers: HEADERS, body: 'malformed request target\n' };
    const probe = target.path.slice(1);
    if (probe !== 'healthz' && probe !== 'livez' && probe !== 'readyz') return undefined;
    return this.run(probe, target.query);
  }

  private run(probe: ProbeName, query: URLSearchParams): ProbeAnswer {
    const excluded = new Set(query.getAll('exclude'));
    const unknownExcluded = new Set(excluded);
    const lines: string[] = [];
    const failedLog: string[] = [];
    const failed: string[] = [];
    const notes: string[] = [];
    for (const check of this.checks[probe]) {
      if (excluded.has(check.name)) {
        unknownExcluded.delete(check.name);
        lines.push(`[+]${check.name} excluded: ok\n`);
        continue;
      }
      const result = check.check();
      if (result.ok) {
        lines.push(`[+]${check.name} ok\n`);
      } else {
        // The endpoint is public: the reason goes to the log only.
        lines.push(`[-]${check.name} failed: reason withheld\n`);
        failedLog.push(`[-]${check.name} failed: ${result.reason}`);
        failed.push(check.name);
      }
      if (result.note) notes.push(result.note);
    }
    for (const note of notes) lines.push(`warn: ${note}\n`);
    if (unknownExcluded.size > 0) {
      lines.push(
        `warn: some health checks cannot be excluded: no matches for ${quoted([...unknownExcluded].sort())}\n`,
      );
    }
    if (excluded.size === 0) this.logChange(probe, failed, failedLog, notes);
    const output = lines.join('');
    if (failed.length > 0) return { status: 500, headers: HEADERS, body: `${output}${probe} check failed\n` };
    if (!query.has('verbose')) return { status: 200, headers: HEADERS, body: 'ok' };
    return { status: 200, headers: HEADERS, body: `${output}${probe} check passed\n` };
  }

  private logChange(probe: ProbeName, failed: string[], failedLog: string[], notes: string[]): void {
    const state = JSON.stringify([failedLog, notes]);
    if ((this.lastLogged.get(probe) ?? JSON.stringify([[], []])) === state) return;
    this.lastLogged.set(probe, state);
    if (failed.length > 0) {
      this.logger?.warn({ probe, failed, checks: failedLog, notes }, `${probe} check failed`);
    } else {
      this.logger?.info({ probe, notes }, `${probe} check passed`);
    }
  }
}

/**
 * controller-runtime's secure metrics: the server speaks HTTPS with `tls`, and `/metrics` answers
 * only those `authorize` allows (observability/metrics-auth.ts); the probes stay open, for the kubelet.
 */
export interface MetricsSecurity {
  tls: { certPem: string; keyPem: string };
  authorize(method: string, path: string, authorization: string | undefined): Promise<MetricsDecision>;
}

export interface ProbesServerOptions extends ProbeChecks {
  /** What `/metrics` serves; none: a probes-only server (`--health-probe-bind-address`), /metrics is 404. */
  registry?: Registry;
  logger?: ProbeLogger & Pick<Logger, 'error'>;
  /** HTTPS and authorized /metrics; none: plain HTTP, /metrics open. */
  security?: MetricsSecurity;
}

/**
 * The probes and metrics port's connection limits, one default each: a kubelet probe and a scrape
 * are one short request, so a connection that has sent no complete request within 10 s, or holds
 * the port beyond the first 128 connections, is a client this port does not serve (Node's defaults,
 * 60 s of headers and no cap, let 1,500 slow connections hold it).
 */
export const PROBES_CONNECTION_SETTINGS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  timeoutCheckIntervalMs: 1_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 128,
} as const;

/**
 * A request target (RFC 9112 section 3.2) as its path and query: origin-form (`/readyz?verbose`,
 * `//`) split at the first `?`, absolute-form parsed as a URL; undefined when it is neither (`http://[::1`).
 * Not `new URL(target, base)`: it reads `//x` as a host and throws on what a client may send.
 */
export function parseRequestTarget(target: string): { path: string; query: URLSearchParams } | undefined {
  if (target.startsWith('/')) {
    const mark = target.indexOf('?');
    return mark === -1
      ? { path: target, query: new URLSearchParams() }
      : { path: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) };
  }
  try {
    const url = new URL(target);
    return { path: url.pathname, query: url.searchParams };
  } catch {
    return undefined;
  }
}

/**
 * The plain-HTTP port every process of the operator (webhook, controller, cert bootstrapper) runs
 * beside its work: `/healthz`, `/livez` and `/readyz` (see Probes) and `/metrics` from a prom-client
 * registry. GET and HEAD only; any other path is 404.
 */
export class ProbesServer {
  readonly probes: Probes;
  private readonly server: Server;
  private readonly registry: Registry | undefined;
  private readonly logger: ProbesServerOptions['logger'];
  private readonly security: MetricsSecurity | undefined;

  constructor(options: ProbesServerOptions) {
    this.probes = new Probes(options, options.logger);
    this.registry = options.registry;
    this.logger = options.logger;
    this.security = options.security;
    const settings = {
      headersTimeout: PROBES_CONNECTION_SETTINGS.headersTimeoutMs,
      requestTimeout: PROBES_CONNECTION_SETTINGS.requestTimeoutMs,
      connectionsCheckingInterval: PROBES_CONNECTION_SETTINGS.timeoutCheckIntervalMs,
      keepAliveTimeout: PROBES_CONNECTION_SETTINGS.keepAliveTimeoutMs,
    };
    const handle = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
    const tls = options.security?.tls;
    this.server = tls
      ? createHttpsServer(
          {
            ...settings,
            cert: tls.certPem,
            key: tls.keyPem,
            minVersion: 'TLSv1.2',
            handshakeTimeout: settings.headersTimeout,
          },
          handle,
        )
      : createServer(settings, handle);
    this.server.maxConnections = PROBES_CONNECTION_SETTINGS.maxConnections;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', ...HEADERS }).end('method not allowed\n');
      return;
    }
    let answer: ProbeAnswer | undefined;
    try {
      answer = this.probes.answer(url);
    } catch (error) {
      this.logger?.error({ path: url, err: error instanceof Error ? error.message : String(error) }, 'probe failed');
      res.writeHead(500, HEADERS).end('internal server error\n');
      return;
    }
    if (answer) {
      res.writeHead(answer.status, answer.headers).end(answer.body);
    } else if (this.registry && parseRequestTarget(url)?.path === '/metrics') {
      this.metrics(req, res, this.registry);
    } else {
      res.writeHead(404, HEADERS).end('404 page not found\n');
    }
  }

  private metrics(req: IncomingMessage, res: ServerResponse, registry: Registry): void {
    const serve = () =>
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500, HEADERS).end(`${String(error)}\n`),
      );
    if (!this.security) {
      serve();
      return;
    }
    this.security.authorize(req.method ?? 'GET', '/metrics', req.headers.authorization).then(
      (decision) => {
        if (decision.allowed) serve();
        else res.writeHead(decision.status, HEADERS).end(`${decision.message}\n`);
      },
      (error: unknown) => res.writeHead(500, HEADERS).end(`${String(error)}\n`),
    );
  }

  /** Listens on `port` (0: any free port) and resolves with the port. */
  listen(port: number, host?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** Where the metrics (with the probes) and, optionally, the probes alone are served. */
export interface ObservabilityAddresses {
  metrics: BindAddress | 'off';
  /** `--health-probe-bind-address`: the probes on a port of their own too. */
  probes?: BindAddress;
}

export interface ObservabilityServers {
  /** The metrics server's port, unless it is off. */
  metricsPort?: number;
  probePort?: number;
  close(): Promise<void>;
}

/**
 * The metrics server (`/metrics` and the probes, as every process always served them) and, with a
 * probe address, a probes-only server, as controller-runtime's manager serves
 * `--metrics-bind-address` and `--health-probe-bind-address`.
 */
export async function startObservabilityServers(
  options: ProbesServerOptions & { registry: Registry },
  addresses: ObservabilityAddresses,
): Promise<ObservabilityServers> {
  const servers: ProbesServer[] = [];
  const result: ObservabilityServers = {
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
  try {
    if (addresses.metrics !== 'off') {
      const server = new ProbesServer(options);
      servers.push(server);
      result.metricsPort = await server.listen(addresses.metrics.port, addresses.metrics.host);
    }
    if (addresses.probes) {
      const server = new ProbesServer({ ...options, registry: undefined, security: undefined });
      servers.push(server);
      result.probePort = await server.listen(addresses.probes.port, addresses.probes.host);
    }
  } catch (error) {
    await result.close();
    throw error;
  }
  return result;
}
