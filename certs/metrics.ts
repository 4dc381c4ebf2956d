import { Counter, Gauge, type Registry } from 'prom-client';

/** The bootstrapper's metrics, registered on a registry the caller owns (no global registry). */
export class CertsMetrics {
  readonly expiry: Gauge<'cert'>;
  readonly issued: Counter<'cert'>;
  readonly runs: Counter<'outcome'>;
  readonly bundleSize: Gauge;
  readonly lastSuccess: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.expiry = new Gauge({
      name: 'staticsite_certs_expiry_timestamp_seconds',
      help: 'notAfter of the current certificate, as a Unix time',
      labelNames: ['cert'],
      registers,
    });
    this.issued = new Counter({
      name: 'staticsite_certs_issued_total',
      help: 'Certificates issued (cert="ca" or "serving")',
      labelNames: ['cert'],
      registers,
    });
    this.runs = new Counter({
      name: 'staticsite_certs_bootstrap_runs_total',
      help: 'Bootstrap runs by outcome ("ok" or the CertsError code)',
      labelNames: ['outcome'],
      registers,
    });
    this.bundleSize = new Gauge({
      name: 'staticsite_certs_ca_bundle_certificates',
      help: 'CA certificates in the injected bundle (2 during a CA rotation overlap)',
      registers,
    });
    this.lastSuccess = new Gauge({
      name: 'staticsite_certs_last_success_timestamp_seconds',
      help: 'When bootstrap last completed, as a Unix time',
      registers,
    });
  }
}
