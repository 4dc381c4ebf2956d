import { counter, gauge, metricsClass } from '../observability/metric-declarations.ts';

// biome-ignore format: a table, one metric a line
const METRICS = {
  expiry: gauge('staticsite_certs_expiry_timestamp_seconds', 'notAfter of the current certificate, as a Unix time', ['cert']),
  issued: counter('staticsite_certs_issued_total', 'Certificates issued (cert="ca" or "serving")', ['cert']),
  runs: counter('staticsite_certs_bootstrap_runs_total', 'Bootstrap runs by outcome ("ok" or the CertsError code)', ['outcome']),
  bundleSize: gauge('staticsite_certs_ca_bundle_certificates', 'CA certificates in the injected bundle (2 during a CA rotation overlap)'),
  lastSuccess: gauge('staticsite_certs_last_success_timestamp_seconds', 'When bootstrap last completed, as a Unix time'),
};

/** The bootstrapper's metrics, registered on a registry the caller owns (no global registry). */
export class CertsMetrics extends metricsClass(METRICS) {}
