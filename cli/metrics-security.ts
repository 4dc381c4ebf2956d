import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createCertificateAuthority, issueCertificate } from '../certs/x509.ts';
import { SystemClock } from '../clock/clock.ts';
import type { KubeApi } from '../kube/api-client.ts';
import { MetricsAuthorizer } from '../observability/metrics-auth.ts';
import type { MetricsSecurity } from '../observability/probes-server.ts';

/** How long the metrics server's self-signed certificate lives (made anew at every start). */
const SELF_SIGNED_DAYS = 365;

/**
 * A self-signed certificate for the metrics server, as controller-runtime makes one when it is given
 * none: scrapers authenticate themselves with a token and do not verify the server (kubebuilder's
 * ServiceMonitor sets insecureSkipVerify), so only the channel's secrecy matters.
 */
export function selfSignedTls(): { certPem: string; keyPem: string } {
  const notBefore = new Date(Date.now() - 5 * 60_000);
  const ca = createCertificateAuthority({
    commonName: `staticsite-metrics-ca@${Math.floor(Date.now() / 1000)}`,
    notBefore,
    validityDays: SELF_SIGNED_DAYS,
  });
  return issueCertificate({
    ca,
    commonName: 'staticsite-metrics',
    subjectAltNames: ['localhost', '127.0.0.1', hostname()],
    usage: 'serverAuth',
    notBefore,
    validityDays: SELF_SIGNED_DAYS,
  });
}

/** HTTPS with a self-signed certificate, /metrics for whom `api` allows it. */
export function securedBy(api: KubeApi, logger: Pick<Logger, 'warn' | 'debug'>): MetricsSecurity {
  const authorizer = new MetricsAuthorizer({ api, clock: new SystemClock(), logger });
  return { tls: selfSignedTls(), authorize: (method, path, header) => authorizer.decide(method, path, header) };
}

/**
 * The metrics server's security: with `secure` and a cluster to ask, HTTPS and TokenReview +
 * SubjectAccessReview; otherwise none (plain HTTP), and without a cluster the log says why.
 */
export async function metricsSecurity(
  secure: boolean,
  api: (() => Promise<KubeApi>) | undefined,
  logger: Pick<Logger, 'warn' | 'debug'>,
): Promise<MetricsSecurity | undefined> {
  if (!secure) return undefined;
  if (api === undefined) {
    logger.warn({}, 'metrics are served over plain HTTP: there is no cluster to authenticate scrapers against');
    return undefined;
  }
  return securedBy(await api(), logger);
}
