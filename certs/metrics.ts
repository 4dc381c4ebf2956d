import type { Counter, Gauge, Registry } from 'prom-client';
import { declareMetrics } from '../kube/metric-declarations.ts';

/** The bootstrapper's metrics, registered on a registry the caller owns (no global registry). */
export class CertsMetrics {
  readonly expiry: Gauge<'cert'>;
  readonly issued: Counter<'cert'>;
  readonly runs: Counter<'outcome'>;
  readonly bundleSize: Gauge;
  readonly lastSuccess: Gauge;

  constructor(registry: Registry) {
    const declare = declareMetrics(registry);
    this.expiry = declare.gauge(
      'staticsite_certs_expiry_timestamp_seconds',
      'notAfter of the current certificate, as a Unix time',
      ['cert'],
    );
    this.issued = declare.counter('staticsite_certs_issued_total', 'Certificates issued (cert="ca" or "serving")', [
      'cert',
    ]);
    this.runs = declare.counter(
      'staticsite_certs_bootstrap_runs_total',
      'Bootstrap runs by outcome ("ok" or the CertsError code)',
      ['outcome'],
    );
    this.bundleSize = declare.gauge(
      'staticsite_certs_ca_bundle_certificates',
      'CA certificates in the injected bundle (2 during a CA rotation overlap)',
    );
    this.lastSuccess = declare.gauge(
      'staticsite_certs_last_success_timestamp_seconds',
      'When bootstrap last completed, as a Unix time',
    );
  }
}
