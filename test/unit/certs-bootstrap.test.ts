import { X509Certificate } from 'node:crypto';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { expect } from 'chai';
import forge from 'node-forge';
import pino from 'pino';
import { Registry } from 'prom-client';
import { type BootstrapDeps, bootstrap } from '../../certs/bootstrap.ts';
import { type CertsConfig, DAY_MS, defaultConfig } from '../../certs/config.ts';
import { CertsError } from '../../certs/errors.ts';
import type { BundleInjector, InjectionResult } from '../../certs/injector.ts';
import { CertsMetrics } from '../../certs/metrics.ts';
import { createCertificateAuthority, generateRsaKeyPem } from '../../certs/x509.ts';
import { MemoryStore } from '../support/certs/memory-store.ts';
import { ManualClock } from '../support/kube/index.ts';

const T0 = '2026-03-01T00:00:00.000Z';
const MIN = 60_000;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1'; // RFC 5280 id-kp-serverAuth
const quietLogger = pino({ level: 'silent' });
const fastKey = () => generateRsaKeyPem(1024);

class RecordingInjector implements BundleInjector {
  readonly bundles: string[] = [];
  readonly log: string[];
  constructor(log: string[]) {
    this.log = log;
  }
  async inject(bundlePem: string): Promise<InjectionResult[]> {
    const changed = this.bundles.at(-1) !== bundlePem;
    this.bundles.push(bundlePem);
    if (changed) this.log.push('inject');
    return [{ object: 'MutatingWebhookConfiguration/w', patched: changed ? ['w.example'] : [], unchanged: [] }];
  }
}

function setup(overrides: Partial<CertsConfig> = {}) {
  const log: string[] = [];
  const clock = new ManualClock(T0);
  const store = new MemoryStore(log);
  const injector = new RecordingInjector(log);
  const config = defaultConfig('staticsite-webhook', 'staticsite-system', overrides);
  const deps: BootstrapDeps = { store, injector, clock, logger: quietLogger, generateKey: fastKey };
  return { log, clock, store, injector, config, deps, run: (c: CertsConfig = config) => bootstrap(c, deps) };
}

function certsOf(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map(
    (block) => new X509Certificate(block),
  );
}

function one(pem: string | undefined): X509Certificate {
  const [cert] = certsOf(pem ?? '');
  if (!cert) throw new Error('no certificate');
  return cert;
}

const KEY_USAGES = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
];

/** The keyUsage extension (RFC 5280 4.2.1.3) of a certificate, read from its DER. */
function keyUsageOf(pem: string): { critical: boolean; usages: string[] } | undefined {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64').toString('binary');
  const tbs = (forge.asn1.fromDer(der).value as forge.asn1.Asn1[])[0] as forge.asn1.Asn1;
  const extensions = (tbs.value as forge.asn1.Asn1[]).find(
    (f) => f.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && f.type === 3,
  );
  const list = ((extensions?.value ?? []) as forge.asn1.Asn1[])[0];
  for (const ext of (list?.value ?? []) as forge.asn1.Asn1[]) {
    const parts = ext.value as forge.asn1.Asn1[];
    if (forge.asn1.derToOid(forge.util.createBuffer(parts[0]?.value as string)) !== '2.5.29.15') continue;
    const critical = parts.length === 3 && (parts[1]?.value as string) === '\xff';
    const bitString = forge.asn1.fromDer(parts.at(-1)?.value as string).value as string;
    const bits = bitString.charCodeAt(1);
    return { critical, usages: KEY_USAGES.filter((_, i) => (bits & (0x80 >> i)) !== 0) };
  }
  return undefined;
}

describe('certs: bootstrap issues as documented', () => {
  it('uses the documented defaults: CA 5 years, serving 90 days, renew at a third left, ECDSA (RSA 3072/2048 on request)', () => {
    const config = defaultConfig('svc', 'ns');
    expect(config.keyAlgorithm).to.equal('ECDSA');
    expect(config.caValidityDays).to.equal(1825);
    expect(config.servingValidityDays).to.equal(90);
    expect(config.renewFraction).to.equal(1 / 3);
    expect(config.caKeyBits).to.equal(3072);
    expect(config.servingKeyBits).to.equal(2048);
    expect(config.caOverlapMs).to.equal(90 * DAY_MS);
  });

  it('the serving cert has the four Service SANs plus --san DNS names and IPs, and serverAuth only', async () => {
    const { run, store } = setup({ extraSans: ['127.0.0.1', 'webhook.local', '::1'] });
    await run();
    const leaf = one(store.serving?.certPem);
    expect(leaf.subjectAltName?.split(', ')).to.deep.equal([
      'DNS:staticsite-webhook',
      'DNS:staticsite-webhook.staticsite-system',
      'DNS:staticsite-webhook.staticsite-system.svc',
      'DNS:staticsite-webhook.staticsite-system.svc.cluster.local',
      'IP Address:127.0.0.1',
      'DNS:webhook.local',
      'IP Address:0:0:0:0:0:0:0:1',
    ]);
    expect(leaf.keyUsage).to.deep.equal([SERVER_AUTH]);
    expect(leaf.ca).to.equal(false);
    expect(leaf.checkHost('staticsite-webhook.staticsite-system.svc')).to.equal(
      'staticsite-webhook.staticsite-system.svc',
    );
    expect(leaf.checkIP('127.0.0.1')).to.equal('127.0.0.1');
    const forgeCert = forge.pki.certificateFromPem(store.serving?.certPem ?? '');
    const keyUsage = forgeCert.getExtension('keyUsage') as {
      critical: boolean;
      digitalSignature: boolean;
      keyEncipherment: boolean;
      keyCertSign?: boolean;
    };
    expect(keyUsage).to.include({ critical: true, digitalSignature: true, keyEncipherment: true });
    expect(keyUsage.keyCertSign).to.not.equal(true);
  });

  it('validity: serving notAfter = now + 90 days, CA notAfter = now + 5 years, both backdated 5 minutes', async () => {
    const { run, store } = setup();
    await run();
    const leaf = one(store.serving?.certPem);
    const ca = one(store.ca?.bundlePem);
    expect(new Date(leaf.validTo).toISOString()).to.equal('2026-05-30T00:00:00.000Z'); // T0 + 90 days
    expect(new Date(leaf.validFrom).toISOString()).to.equal('2026-02-28T23:55:00.000Z');
    expect(new Date(ca.validTo).toISOString()).to.equal('2031-02-28T00:00:00.000Z'); // T0 + 1825 days
    expect(new Date(ca.validFrom).toISOString()).to.equal('2026-02-28T23:55:00.000Z');
    expect(ca.ca).to.equal(true);
  });

  it('generates ECDSA P-256 keys with the default generator; the leaf may sign, not encipher', async () => {
    const { store, clock, config } = setup();
    await bootstrap(config, { store, clock, logger: quietLogger });
    for (const pem of [store.ca?.bundlePem, store.serving?.certPem]) {
      const key = one(pem).publicKey;
      expect(key.asymmetricKeyType).to.equal('ec');
      expect(key.asymmetricKeyDetails?.namedCurve).to.equal('prime256v1');
    }
    expect(keyUsageOf(store.serving?.certPem ?? '')).to.deep.equal({ critical: true, usages: ['digitalSignature'] });
    expect(keyUsageOf(store.ca?.bundlePem ?? '')).to.deep.equal({
      critical: true,
      usages: ['digitalSignature', 'keyCertSign', 'cRLSign'],
    });
  });

  it('with keyAlgorithm RSA generates keys of the documented sizes', async function () {
    this.timeout(30_000);
    const { store, clock, config } = setup({ keyAlgorithm: 'RSA' });
    await bootstrap(config, { store, clock, logger: quietLogger });
    expect(one(store.ca?.bundlePem).publicKey.asymmetricKeyDetails?.modulusLength).to.equal(3072);
    expect(one(store.serving?.certPem).publicKey.asymmetricKeyDetails?.modulusLength).to.equal(2048);
    expect(keyUsageOf(store.serving?.certPem ?? '')).to.deep.equal({
      critical: true,
      usages: ['digitalSignature', 'keyEncipherment'],
    });
  });

  it('the chain verifies with crypto.X509Certificate and a TLS client trusting the bundle accepts the cert', async () => {
    // TLS (OpenSSL security level 2) refuses the 1024-bit keys the other tests use for speed.
    const { store, clock, config } = setup({ extraSans: ['127.0.0.1'] });
    clock.set(new Date()); // the TLS stack checks validity against the real time
    await bootstrap(config, { store, clock, logger: quietLogger, generateKey: () => generateRsaKeyPem(2048) });
    const leaf = one(store.serving?.certPem);
    const [ca] = certsOf(store.serving?.caPem ?? '');
    if (!ca) throw new Error('no CA in ca.crt');
    expect(leaf.checkIssued(ca)).to.equal(true);
    expect(leaf.verify(ca.publicKey)).to.equal(true);
    expect(ca.verify(ca.publicKey)).to.equal(true);
    expect(
      leaf.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(store.serving?.keyPem ?? ''))),
    ).to.equal(true);
    const authorized = await handshake(
      store.serving?.certPem ?? '',
      store.serving?.keyPem ?? '',
      store.serving?.caPem ?? '',
      'staticsite-webhook.staticsite-system.svc',
    );
    expect(authorized).to.equal(true);
  });

  it('is idempotent: a second run writes nothing and injects nothing new', async () => {
    const { run, store, log, clock } = setup();
    const first = await run();
    expect(first.changed).to.equal(true);
    const before = structuredClone({ ca: store.ca, serving: store.serving });
    await clock.advance(DAY_MS);
    const second = await run();
    expect(second.changed).to.equal(false);
    expect(second.actions).to.deep.equal([]);
    expect({ ca: store.ca, serving: store.serving }).to.deep.equal(before);
    expect(log).to.deep.equal(['save-ca', 'inject', 'save-serving']);
  });

  it('is idempotent with IP SANs too (an IPv6 SAN reads back expanded, and still matches)', async () => {
    const { run } = setup({ extraSans: ['::1', '127.0.0.1', 'Webhook.Local'] });
    expect((await run()).changed).to.equal(true);
    expect((await run()).actions).to.deep.equal([]);
  });

  it('re-issues the serving cert (same CA) when the wanted SANs change', async () => {
    const { run, store, config } = setup();
    await run();
    const caBefore = store.ca?.bundlePem;
    const result = await run({ ...config, extraSans: ['127.0.0.1'] });
    expect(result.actions).to.include('serving-issued');
    expect(result.actions).to.not.include('ca-rotated');
    expect(store.ca?.bundlePem).to.equal(caBefore);
    expect(one(store.serving?.certPem).subjectAltName).to.include('IP Address:127.0.0.1');
  });
});

describe('certs: renewal and CA rotation (injected clock)', () => {
  // Serving: notBefore T0-5m, notAfter T0+90d; renewal when a third remains: notAfter - (90d+5m)/3.
  const servingRenewAt = new Date(T0).getTime() + 90 * DAY_MS - (90 * DAY_MS + 5 * MIN) / 3;

  it('keeps the serving cert just before the threshold and renews it just after', async () => {
    const { run, clock, store } = setup();
    await run();
    const original = store.serving?.certPem;
    clock.set(new Date(servingRenewAt - MIN));
    expect((await run()).actions).to.deep.equal([]);
    expect(store.serving?.certPem).to.equal(original);
    clock.set(new Date(servingRenewAt + MIN));
    const renewed = await run();
    expect(renewed.actions).to.deep.equal(['serving-issued', 'serving-stored']);
    expect(store.serving?.certPem).to.not.equal(original);
    expect(new Date(one(store.serving?.certPem).validTo).getTime()).to.equal(
      servingRenewAt + MIN + 90 * DAY_MS - ((servingRenewAt + MIN) % 1000),
    );
  });

  it('reports the next due time as the serving renewal threshold', async () => {
    const { run } = setup();
    const result = await run();
    expect(result.nextDue.getTime()).to.equal(servingRenewAt);
  });

  it('renews an expired serving cert', async () => {
    const { run, clock } = setup();
    await run();
    clock.set(new Date(new Date(T0).getTime() + 91 * DAY_MS));
    const result = await run();
    expect(result.actions).to.include('serving-issued');
  });

  // CA: notBefore T0-5m, notAfter T0+1825d; rotation when a third remains.
  const caRenewAt = new Date(T0).getTime() + 1825 * DAY_MS - (1825 * DAY_MS + 5 * MIN) / 3;

  it('rotates the CA at its threshold: the bundle holds old and new, injected before the new serving cert is stored', async () => {
    const { run, clock, store, log, injector } = setup();
    await run();
    const oldCa = one(store.ca?.bundlePem);
    // Keep the serving cert fresh up to the CA threshold, as --watch would.
    clock.set(new Date(caRenewAt - 10 * DAY_MS));
    await run();
    clock.set(new Date(caRenewAt - MIN));
    expect((await run()).actions).to.not.include('ca-rotated');
    log.length = 0;
    clock.set(new Date(caRenewAt + MIN));
    const result = await run();
    expect(result.actions).to.include.members(['ca-rotated', 'serving-issued']);
    const bundle = certsOf(store.ca?.bundlePem ?? '');
    expect(bundle).to.have.length(2);
    expect(bundle[0]?.fingerprint256).to.equal(oldCa.fingerprint256);
    const newCa = bundle[1] as X509Certificate;
    expect(newCa.fingerprint256).to.not.equal(oldCa.fingerprint256);
    expect(certsOf(injector.bundles.at(-1) ?? '').map((c) => c.fingerprint256)).to.deep.equal([
      oldCa.fingerprint256,
      newCa.fingerprint256,
    ]);
    expect(log).to.deep.equal(['save-ca', 'inject', 'save-serving']);
    const leaf = one(store.serving?.certPem);
    expect(leaf.verify(newCa.publicKey)).to.equal(true);
    expect(store.serving?.caPem).to.equal(store.ca?.bundlePem);
  });

  it('keeps the old CA for the overlap (one serving lifetime) and then drops it', async () => {
    const { run, clock, store, injector, config } = setup();
    await run();
    const oldFp = one(store.ca?.bundlePem).fingerprint256;
    const rotatedAt = new Date(T0).getTime() + 10 * DAY_MS;
    clock.set(new Date(rotatedAt));
    await run({ ...config, forceCaRotation: true });
    expect(certsOf(store.ca?.bundlePem ?? '')).to.have.length(2);
    // Overlap ends one serving lifetime after the new CA was made: rotatedAt + 90d.
    const overlapEnd = rotatedAt + 90 * DAY_MS;
    clock.set(new Date(overlapEnd - MIN));
    const during = await run();
    expect(during.bundle.map((c) => c.fingerprint)).to.include(oldFp);
    expect(certsOf(injector.bundles.at(-1) ?? '')).to.have.length(2);
    clock.set(new Date(overlapEnd + MIN));
    const after = await run();
    expect(after.actions).to.include('ca-bundle-pruned');
    expect(after.bundle.map((c) => c.fingerprint)).to.not.include(oldFp);
    expect(certsOf(store.ca?.bundlePem ?? '')).to.have.length(1);
    expect(certsOf(injector.bundles.at(-1) ?? '')).to.have.length(1);
    expect(certsOf(store.serving?.caPem ?? '')).to.have.length(1);
  });

  it('a short --ca-overlap (after a key leak) drops the old CA on the first pass after it, never before the leaf moved', async () => {
    const { run, clock, config } = setup({ caOverlapMs: 0 });
    await run();
    await clock.advance(MIN);
    const rotation = await run({ ...config, forceCaRotation: true });
    // The stored serving cert was still signed by the old CA when this pass began: the old CA stays.
    expect(rotation.bundle).to.have.length(2);
    await clock.advance(1000);
    const next = await run();
    expect(next.actions).to.include('ca-bundle-pruned');
    expect(next.bundle.map((c) => c.fingerprint)).to.deep.equal([rotation.ca.fingerprint]);
  });

  it('a forced rotation of a healthy CA still keeps the old CA next to the new one', async () => {
    const { run, clock, config } = setup();
    await run();
    await clock.advance(MIN);
    const result = await run({ ...config, forceCaRotation: true });
    expect(result.actions).to.include.members(['ca-rotated', 'ca-stored', 'bundle-injected', 'serving-issued']);
    expect(result.bundle).to.have.length(2);
  });

  it('rotates an expired CA and drops it at once (nothing it signed is valid any more)', async () => {
    const { run, clock, store } = setup();
    await run();
    clock.set(new Date(new Date(T0).getTime() + 1826 * DAY_MS));
    const result = await run();
    expect(result.actions).to.include.members(['ca-rotated', 'ca-bundle-pruned', 'serving-issued']);
    expect(certsOf(store.ca?.bundlePem ?? '')).to.have.length(1);
  });

  it('a lost CA store: the new bundle keeps the CA of the live serving cert (from its ca.crt) for the overlap', async () => {
    const { run, clock, store } = setup();
    await run();
    const oldFp = one(store.ca?.bundlePem).fingerprint256;
    store.ca = undefined;
    await clock.advance(DAY_MS);
    const result = await run();
    expect(result.actions).to.include.members(['ca-created', 'serving-issued']);
    expect(result.bundle.map((c) => c.fingerprint)).to.deep.equal([oldFp, result.ca.fingerprint]);
  });

  it('clamps a serving cert to the CA lifetime and updates the expiry metrics', async () => {
    const { store, clock, config } = setup({ caValidityDays: 100, servingValidityDays: 120 });
    const metrics = new CertsMetrics(new Registry());
    const result = await bootstrap(config, { store, clock, logger: quietLogger, generateKey: fastKey, metrics });
    expect(result.serving.notAfter.getTime()).to.equal(result.ca.notAfter.getTime());
    const gauge = await metrics.expiry.get();
    expect(gauge.values.find((v) => v.labels.cert === 'serving')?.value).to.equal(
      result.serving.notAfter.getTime() / 1000,
    );
    expect((await metrics.runs.get()).values).to.deep.equal([{ value: 1, labels: { outcome: 'ok' } }]);
  });
});

describe('certs: corrupt or inconsistent stored material gives the documented errors', () => {
  async function failure(mutate: (s: MemoryStore) => void): Promise<CertsError> {
    const { run, store } = setup();
    await run();
    mutate(store);
    try {
      await run();
    } catch (error) {
      expect(error).to.be.instanceOf(CertsError);
      return error as CertsError;
    }
    throw new Error('bootstrap did not fail');
  }

  it('tls.crt that is not PEM', async () => {
    const error = await failure((s) => {
      if (s.serving) s.serving.certPem = 'hello';
    });
    expect(error.code).to.equal('CorruptPem');
    expect(error.message).to.equal(
      'memory serving tls.crt is not a PEM certificate bundle (no "-----BEGIN CERTIFICATE-----" block). Clear the serving material.',
    );
  });

  it('a certificate block whose base64 is damaged', async () => {
    const error = await failure((s) => {
      if (s.serving?.certPem)
        s.serving.certPem = s.serving.certPem.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAA!!!!AAAAAAAAAAAA');
    });
    expect(error.code).to.equal('CorruptPem');
    expect(error.message).to.match(
      /^memory serving tls\.crt: certificate 1 of 1 does not parse \(.+\)\. Clear the serving material\.$/,
    );
  });

  it('ca.key that is not a private key', async () => {
    const error = await failure((s) => {
      if (s.ca) s.ca.keyPem = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    });
    expect(error.code).to.equal('CorruptPem');
    expect(error.message).to.include('memory ca ca.key is not a PEM private key');
  });

  it('ca.key missing while ca.crt exists', async () => {
    const error = await failure((s) => {
      if (s.ca) s.ca = { bundlePem: s.ca.bundlePem as string };
    });
    expect(error.code).to.equal('CorruptPem');
    expect(error.message).to.equal('memory ca ca.key is missing while memory ca ca.crt exists. Clear the ca material.');
  });

  it('ca.key that belongs to no CA in ca.crt', async () => {
    const other = createCertificateAuthority({
      commonName: 'other',
      notBefore: new Date(T0),
      validityDays: 10,
    });
    const error = await failure((s) => {
      if (s.ca) s.ca.keyPem = other.keyPem;
    });
    expect(error.code).to.equal('KeyMismatch');
    expect(error.message).to.equal(
      'memory ca ca.key belongs to none of the 1 CA certificate(s) in memory ca ca.crt. Clear the ca material.',
    );
  });

  it('a tls.key that does not match tls.crt is not an error: the serving cert is re-issued', async () => {
    const { run, store } = setup();
    await run();
    const other = createCertificateAuthority({
      commonName: 'other',
      notBefore: new Date(T0),
      validityDays: 10,
    });
    if (store.serving) store.serving.keyPem = other.keyPem;
    const result = await run();
    expect(result.actions).to.include('serving-issued');
  });

  it('an invalid --service is rejected before anything is written', async () => {
    const { run, store, config } = setup();
    try {
      await run({ ...config, service: 'Bad_Name' });
      expect.fail('no error');
    } catch (error) {
      expect((error as CertsError).code).to.equal('InvalidInput');
      expect((error as Error).message).to.include('--service "Bad_Name" is not a DNS-1123 label');
    }
    expect(store.ca).to.equal(undefined);
  });
});

function handshake(certPem: string, keyPem: string, caPem: string, servername: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer({ cert: certPem, key: keyPem }, (socket) => socket.end('ok'));
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const socket: TLSSocket = connect({ host: '127.0.0.1', port, ca: caPem, servername }, () => {
        const ok = socket.authorized;
        socket.end();
        server.close();
        resolve(ok);
      });
      socket.on('error', (error) => {
        server.close();
        reject(error);
      });
    });
  });
}
