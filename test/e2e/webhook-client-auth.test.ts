/**
 * `staticsite webhook --client-ca FILE` (mTLS) behind a real kube-apiserver that authenticates to it:
 * kube-apiserver started with `--admission-control-config-file`, an AdmissionConfiguration whose two
 * webhook plugins read a kubeconfig with a user named by the webhook's `host:port` holding a client
 * certificate from a test CA (certs/apiserver-client.ts writes both). The webhook is the built one
 * (`node dist/bin/staticsite.js webhook`) with `--client-ca` naming that CA and `--conversion-port`:
 * the CRD's conversion webhook is registered at that port, which asks for no client certificate
 * (kube-apiserver sends none on conversion calls) and serves /convert alone.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { expect } from 'chai';
import { buildCrd } from '../../api/index.ts';
import { issueApiServerClientCertificate, webhookKubeconfigYaml } from '../../certs/apiserver-client.ts';
import { createCertificateAuthority, issueCertificate, type KeyPair } from '../../certs/x509.ts';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd } from '../../devenv/crds.ts';
import { observe } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';

const NS = 'client-auth';
const v1 = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const v1alpha1 = `/apis/staticsite.dev/v1alpha1/namespaces/${NS}/staticsites`;
const REVIEW = readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8');
const CONVERSION_REVIEW = readFileSync(new URL('../fixtures/conversion/v1-to-v1alpha1.json', import.meta.url), 'utf8');

interface Site {
  apiVersion?: string;
  metadata: { name: string; finalizers?: string[]; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

function site(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name }, spec };
}

function ca(commonName: string): KeyPair {
  return createCertificateAuthority({ commonName, notBefore: new Date(Date.now() - 60_000), validityDays: 2 });
}

function clientOf(authority: KeyPair): KeyPair {
  return issueCertificate({
    ca: authority,
    commonName: 'direct-caller',
    usage: 'clientAuth',
    notBefore: new Date(Date.now() - 60_000),
    validityDays: 1,
  });
}

/** What a direct POST of a review got: an HTTP status, or the error that ended the connection. */
type Outcome = { status: number } | { error: string };

/** POSTs the fixture review to `/validate`, with a client certificate when one is given. */
function post(port: number, caPem: string, client?: KeyPair, tls: Record<string, unknown> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        ca: caPem,
        agent: false,
        headers: { 'content-type': 'application/json' },
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
        ...tls,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: `${error.code}: ${error.message}` }));
    req.end(REVIEW);
  });
}

/** A certificate-less request to `path` on `port`: its status and JSON body, or the error that ended it. */
function call(
  port: number,
  caPem: string,
  request_: { method: string; path: string; body?: string },
): Promise<{ status: number; body: { message?: string } } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: request_.path,
        method: request_.method,
        ca: caPem,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: `${error.code}: ${error.message}` }));
    req.end(request_.body);
  });
}

/**
 * A TLS connection that sends nothing: the error (`code: message`) the server ended it with, a close
 * without one, or `open` when it still stands after a second.
 */
function handshake(port: number, caPem: string, client: KeyPair | undefined, maxVersion: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      ca: caPem,
      servername: 'localhost',
      maxVersion: maxVersion as 'TLSv1.2' | 'TLSv1.3',
      ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
    });
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('open');
    }, 1_000);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(`${error.code}: ${error.message}`);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(`closed by the server, ${received} bytes received`);
    });
  });
}

/** The webhook's count of reviews it received (every path and outcome, or those of one path). */
async function reviewsCounted(webhook: WebhookProcess, path?: string): Promise<number> {
  const { text } = await observe(webhook.metricsUrl('/metrics'));
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('staticsite_webhook_requests_total{')) continue;
    if (path === undefined || line.includes(`path="${path}"`)) total += Number(line.split(' ').at(-1));
  }
  return total;
}

/** staticsite_webhook_tls_handshake_failures_total for `reason`. */
async function handshakeFailures(webhook: WebhookProcess, reason: string): Promise<number> {
  const { text } = await observe(webhook.metricsUrl('/metrics'));
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`staticsite_webhook_tls_handshake_failures_total{reason="${reason}"}`));
  return Number(line?.split(' ').at(-1) ?? 0);
}

/**
 * Points the CRD's conversion webhook at `url`, and waits until a v1alpha1 list passes (`ok`) or
 * fails for want of a client certificate; returns that last answer.
 */
async function convertVia(
  cp: ControlPlane,
  url: string,
  caBundle: string,
  ok: boolean,
): Promise<{ status: number; message?: string }> {
  const crd = buildCrd({ withoutCelRules: true, conversionClientConfig: { url, caBundle } });
  await installCrd(cp.admin, crd);
  let last = { status: 0, message: undefined as string | undefined };
  await eventually(`v1alpha1 reads ${ok ? 'pass' : 'fail'} with conversion at ${url}`, async () => {
    const res = await cp.admin.get<{ message?: string }>(v1alpha1);
    last = { status: res.status, message: res.body.message };
    // A changed CRD reinitializes its watch cache, which cannot fill while conversion fails: the list
    // answers 429 "storage is (re)initializing" with the conversion error inside.
    return ok ? res.status === 200 : res.status >= 429 && res.text.includes('tls: certificate required');
  }).catch((error: Error) => {
    throw new Error(`${error.message}; last answer: ${JSON.stringify(last)}`);
  });
  return last;
}

/** An HTTPS request that got no response: the alert, or the reset when the request was already written. */
const NO_ANSWER = /^(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED|ERR_SSL_TLSV1_ALERT_UNKNOWN_CA|EPROTO|ECONNRESET): /;

describe('e2e: webhook --client-ca behind a kube-apiserver that presents a client certificate', function () {
  this.timeout(240_000);
  let cp: ControlPlane;
  let serving: LoopbackCerts;
  let dir: string;
  let clientCaFile: string;
  let webhook: WebhookProcess;
  let conversionPort: number;
  const clientCa = ca('apiserver-client-test-ca');
  const otherCa = ca('some-other-ca');

  before(async () => {
    serving = await loopbackCerts();
    dir = await mkdtemp(join(tmpdir(), 'staticsite-client-auth-'));
    clientCaFile = join(dir, 'client-ca.crt');
    await writeFile(clientCaFile, clientCa.certPem);
    // The kubeconfig's user is named by the URL's host:port, so the port is chosen first.
    const port = await freePort();
    const apiServerClient = issueApiServerClientCertificate(clientCa, 1);
    cp = await new ControlPlane({
      webhookClientKubeconfig: webhookKubeconfigYaml([`127.0.0.1:${port}`], apiServerClient),
    }).start();
    await cp.ensureNamespace(NS);
    conversionPort = await freePort();
    webhook = await WebhookProcess.start({
      certDir: serving.dir,
      port,
      args: [`--client-ca=${clientCaFile}`, `--conversion-port=${conversionPort}`],
    });
    // No CEL rules in the CRD: the webhook is the one to deny. Its conversion webhook is this webhook's
    // conversion port, which asks for no client certificate.
    await installCrd(
      cp.admin,
      buildCrd({
        withoutCelRules: true,
        conversionClientConfig: { url: `https://127.0.0.1:${conversionPort}/convert`, caBundle: serving.caBundle },
      }),
    );
    const { mutating, validating } = webhookConfigurations(webhook.url, serving.caBundle, 'client-auth');
    await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
    await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
    await eventually('webhooks active', async () => {
      const res = await cp.admin.post<Site>(v1, site('probe', { content: 'x' }), { query: { dryRun: 'All' } });
      return res.body.metadata?.finalizers?.includes('staticsite.dev/external-record');
    });
  });

  after(async () => {
    await webhook?.stop();
    await cp?.stop();
    await rm(dir, { recursive: true, force: true });
    if (serving) await rm(serving.dir, { recursive: true, force: true });
  });

  it('(a) the API server authenticates: creates are mutated, admitted and denied by the webhook, which counts them', async () => {
    const before = await reviewsCounted(webhook);
    const admitted = await cp.admin.post<Site>(v1, site('shop', { content: '<h1>shop</h1>' }));
    expect(admitted.status, JSON.stringify(admitted.body)).to.equal(201);
    expect(admitted.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    expect(admitted.body.spec.hostname).to.match(new RegExp(`^shop\\.${NS}\\.`));
    const denied = await cp.admin.post<{ code: number; message: string }>(
      v1,
      site('prod1', { content: 'x', tier: 'prod', replicas: 1 }),
    );
    expect(denied.body.code).to.equal(422);
    expect(denied.body.message).to.match(/^admission webhook "validate\.staticsite\.dev" denied the request: /);
    expect(denied.body.message).to.include('prod sites need at least 2 replicas');
    // Each create: a mutating review and a validating review (and a reinvocation is not needed).
    expect((await reviewsCounted(webhook)) - before).to.be.at.least(4);
  });

  it('(b) a client without a certificate fails at the TLS handshake, and no review is counted', async () => {
    const before = await reviewsCounted(webhook);
    expect(await handshake(webhook.port, serving.ca.certPem, undefined, 'TLSv1.3')).to.match(
      /^ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: .*SSL alert number 116/s,
    );
    expect(await handshake(webhook.port, serving.ca.certPem, undefined, 'TLSv1.2')).to.match(
      /^[A-Z_/]+: .*alert handshake failure.*SSL alert number 40/s,
    );
    // An HTTPS client gets no HTTP answer at all.
    expect(await post(webhook.port, serving.ca.certPem))
      .to.have.property('error')
      .that.matches(NO_ANSWER);
    expect(await reviewsCounted(webhook)).to.equal(before);
  });

  it('(c) a client with a certificate from another CA is refused too; one from the client CA is served', async () => {
    const before = await reviewsCounted(webhook);
    const stranger = clientOf(otherCa);
    // Node checks the chain once OpenSSL's handshake is done and destroys the socket (no alert) before
    // the HTTP server gets it. TLS 1.2: the server's Finished never comes; TLS 1.3: the client has
    // finished, then the connection closes with nothing sent.
    expect(await handshake(webhook.port, serving.ca.certPem, stranger, 'TLSv1.2')).to.equal(
      'ECONNRESET: Client network socket disconnected before secure TLS connection was established',
    );
    expect(await handshake(webhook.port, serving.ca.certPem, stranger, 'TLSv1.3')).to.equal(
      'closed by the server, 0 bytes received',
    );
    expect(await post(webhook.port, serving.ca.certPem, stranger))
      .to.have.property('error')
      .that.matches(NO_ANSWER);
    expect(await reviewsCounted(webhook)).to.equal(before);
    expect(await handshake(webhook.port, serving.ca.certPem, clientOf(clientCa), 'TLSv1.3')).to.equal('open');
    expect(await post(webhook.port, serving.ca.certPem, clientOf(clientCa))).to.deep.equal({ status: 200 });
    expect(await reviewsCounted(webhook)).to.equal(before + 1);
  });

  it('(d) control: the same webhook without --client-ca serves the certificate-less client', async () => {
    const plain = await WebhookProcess.start({ certDir: serving.dir });
    try {
      expect(await post(plain.port, serving.ca.certPem)).to.deep.equal({ status: 200 });
      expect(await reviewsCounted(plain)).to.equal(1);
    } finally {
      await plain.stop();
    }
  });

  it('(e) conversion through the conversion port: v1alpha1 writes and reads pass, admission still goes through the certificate', async () => {
    const converted = await reviewsCounted(webhook, '/convert');
    const admitted = await reviewsCounted(webhook, '/mutate');
    const created = await cp.admin.post<Site>(v1alpha1, {
      apiVersion: 'staticsite.dev/v1alpha1',
      kind: 'StaticSite',
      metadata: { name: 'old-client' },
      spec: { content: '<h1>old</h1>' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.apiVersion).to.equal('staticsite.dev/v1alpha1');
    // Mutated (by the mTLS port, the only one serving /mutate): the finalizer, and the hostname that
    // v1alpha1 carries in an annotation.
    expect(created.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    expect(created.body.metadata.annotations?.['staticsite.dev/hostname']).to.match(
      new RegExp(`^old-client\\.${NS}\\.`),
    );
    const asV1 = await cp.admin.get<Site>(`${v1}/old-client`);
    expect(asV1.body.spec.hostname).to.equal(created.body.metadata.annotations?.['staticsite.dev/hostname']);
    // A v1 object read as v1alpha1.
    const shop = await cp.admin.get<Site>(`${v1alpha1}/shop`);
    expect(shop.status, JSON.stringify(shop.body)).to.equal(200);
    expect(shop.body.spec).to.not.have.property('hostname');
    expect(shop.body.metadata.annotations?.['staticsite.dev/hostname']).to.match(new RegExp(`^shop\\.${NS}\\.`));
    const updated = await cp.admin.put<Site>(`${v1alpha1}/shop`, {
      ...shop.body,
      spec: { ...shop.body.spec, content: 'v2' },
    });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect((await cp.admin.get<Site>(`${v1}/shop`)).body.spec.content).to.equal('v2');
    expect(await reviewsCounted(webhook, '/convert')).to.be.above(converted);
    expect(await reviewsCounted(webhook, '/mutate')).to.be.above(admitted);
    // The mTLS port still refuses a certificate-less client, on /convert too.
    expect(await call(webhook.port, serving.ca.certPem, { method: 'POST', path: '/convert', body: CONVERSION_REVIEW }))
      .to.have.property('error')
      .that.matches(NO_ANSWER);
  });

  it('(f) the conversion port serves a certificate-less client /convert and nothing else: 404 for /mutate, /validate and the probes', async () => {
    const before = await reviewsCounted(webhook);
    const converted = await call(conversionPort, serving.ca.certPem, {
      method: 'POST',
      path: '/convert?timeout=30s',
      body: CONVERSION_REVIEW,
    });
    expect(converted).to.have.property('status', 200);
    for (const path of ['/mutate', '/validate']) {
      const res = await call(conversionPort, serving.ca.certPem, { method: 'POST', path, body: REVIEW });
      expect(res, path).to.deep.equal({
        status: 404,
        body: {
          apiVersion: 'v1',
          kind: 'Status',
          metadata: {},
          status: 'Failure',
          code: 404,
          message: `no route for POST ${path}: use POST /convert`,
          reason: 'NotFound',
        },
      });
    }
    for (const path of ['/readyz', '/healthz']) {
      const res = await call(conversionPort, serving.ca.certPem, { method: 'GET', path });
      expect(res).to.have.property('status', 404);
    }
    // One review counted: the conversion. The refused admission reviews never reached the pipeline.
    expect(await reviewsCounted(webhook)).to.equal(before + 1);
  });

  it('control: CRD conversion calls carry no client certificate, so conversion at the mTLS port fails', async () => {
    // apiextensions-apiserver builds its conversion client with NewDefaultAuthenticationInfoResolver(""):
    // the admission kubeconfig is not read for conversion (docs/certs.md).
    try {
      const res = await convertVia(cp, `${webhook.url}/convert`, serving.caBundle, false);
      expect(res.status, JSON.stringify(res)).to.be.at.least(429);
      // Go's transport prefixes the alert with `readLoopPeekFailLocked: ` when its read loop meets it
      // before the request is sent (net/http transport.go).
      expect(res.message, res.message).to.match(
        /conversion webhook for staticsite\.dev\/v1, Kind=StaticSite failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": (readLoopPeekFailLocked: )?remote error: tls: certificate required/,
      );
    } finally {
      await convertVia(cp, `https://127.0.0.1:${conversionPort}/convert`, serving.caBundle, true);
    }
  });

  it('a --client-ca webhook on a host:port the kubeconfig does not name gets no certificate, so the call fails', async () => {
    const unnamed = await WebhookProcess.start({
      certDir: serving.dir,
      args: [`--client-ca=${clientCaFile}`, '--conversion-port=0'],
    });
    const { validating } = webhookConfigurations(unnamed.url, serving.caBundle, 'client-auth-unnamed');
    try {
      await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
      let message = '';
      await eventually('the unnamed webhook is called', async () => {
        const res = await cp.admin.post<{ message: string }>(v1, site('unnamed', { content: 'x' }), {
          query: { dryRun: 'All' },
        });
        message = res.body.message ?? '';
        return res.status >= 500;
      });
      expect(message).to.include('failed calling webhook "validate.staticsite.dev"');
      // Go's client reads the webhook's alert (`remote error: tls: certificate required`) when it
      // reads before it writes; when it writes its request first (TLS 1.3 ends the client's side of
      // the handshake before the server has checked its certificate), the write meets the
      // connection the webhook closed after that alert.
      expect(message, message).to.match(
        /remote error: tls: certificate required|use of closed network connection|broken pipe|connection reset by peer/,
      );
      expect(await handshakeFailures(unnamed, 'no-client-certificate')).to.be.at.least(1);
      expect(await reviewsCounted(unnamed)).to.equal(0);
    } finally {
      await cp.admin.delete(`${VALIDATING_CONFIGS}/client-auth-unnamed`);
      await unnamed.stop();
    }
  });
});
