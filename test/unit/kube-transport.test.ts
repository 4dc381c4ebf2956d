import { execFileSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate } from '../../certs/x509.ts';
import { SystemClock } from '../../clock/clock.ts';
import { KubeHttp } from '../../devenv/kube-http.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { ApiError } from '../../kube/api-error.ts';
import { CONFIGMAPS } from '../../kube/resources.ts';
import { HttpsTransport } from '../../kube/transport.ts';
import { parseWarningHeaders, warningHeaderValues } from '../../kube/warnings.ts';

const root = new URL('../../', import.meta.url).pathname;

describe('kube/warnings: RFC 7234 Warning headers', () => {
  it('reads every quoted text, several per header, unescaping \\" and \\\\, in order', () => {
    expect(parseWarningHeaders(['299 - "a \\"b\\" c\\\\d", 299 - "second"', '299 - "third"'])).to.deep.equal([
      'a "b" c\\d',
      'second',
      'third',
    ]);
    expect(parseWarningHeaders(['299 -', ''])).to.deep.equal([]);
  });

  it('picks the Warning values out of raw headers, whatever their case', () => {
    expect(warningHeaderValues(['Warning', '299 - "a"', 'Content-Type', 'x', 'warning', '299 - "b"'])).to.deep.equal([
      '299 - "a"',
      '299 - "b"',
    ]);
  });
});

describe('kube/transport from raw credentials, and devenv KubeHttp on it', function () {
  this.timeout(30_000);
  const notBefore = new Date(Date.now() - 60_000);
  const ca = createCertificateAuthority({ commonName: 'test-ca', notBefore, validityDays: 1 });
  const serving = issueCertificate({
    ca,
    commonName: 'api',
    subjectAltNames: ['127.0.0.1'],
    usage: 'serverAuth',
    notBefore,
    validityDays: 1,
  });
  const client = issueCertificate({ ca, commonName: 'alice', usage: 'clientAuth', notBefore, validityDays: 1 });

  let server: Server;
  let url: string;
  const open = new Set<ServerResponse>();

  function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { pathname, searchParams } = new URL(req.url ?? '/', 'https://x');
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const json = (status: number, body: unknown, headers: Record<string, string | string[]> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      switch (pathname) {
        case '/echo':
          return json(
            200,
            {
              method: req.method,
              query: Object.fromEntries(searchParams),
              contentType: req.headers['content-type'] ?? null,
              accept: req.headers.accept,
              authorization: req.headers.authorization ?? null,
              user: peer?.subject?.CN ?? null,
              body: Buffer.concat(chunks).toString('utf8'),
            },
            { warning: ['299 - "first", 299 - "second \\"quoted\\""', '299 - "third"'] },
          );
        case '/readyz':
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end('ok');
        case '/empty':
          res.writeHead(204);
          return res.end();
        case '/watch':
          if (searchParams.get('watch') !== '1') return json(400, { message: 'not a watch' });
          res.writeHead(200, { 'content-type': 'application/json' });
          // Events split across writes, and a blank line between them.
          res.write('{"type":"ADDED","object":{"n":1}}\n{"type":"MOD');
          res.write('IFIED","object":{"n":2}}\n\n');
          if (searchParams.get('hang')) {
            open.add(res);
            return;
          }
          return res.end('{"type":"DELETED","object":{"n":3}}');
        case '/forbidden':
          return json(403, { kind: 'Status', code: 403, reason: 'Forbidden' });
        case '/hang':
          open.add(res);
          return;
        default:
          return json(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'nope' });
      }
    });
  }

  before(async () => {
    server = createServer(
      { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false },
      handle,
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const res of open) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  describe('KubeHttp', () => {
    let http: KubeHttp;
    beforeEach(() => {
      http = new KubeHttp({ server: url, caPem: ca.certPem, certPem: client.certPem, keyPem: client.keyPem });
    });
    afterEach(() => http.close());

    it('sends JSON with the client certificate and a query; answers status, parsed body, text and warnings', async () => {
      const res = await http.post<Record<string, unknown>>(
        '/echo',
        { a: 1 },
        { query: { dryRun: 'All', skip: undefined } },
      );
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        method: 'POST',
        query: { dryRun: 'All' },
        contentType: 'application/json',
        accept: 'application/json',
        authorization: null,
        user: 'alice',
        body: '{"a":1}',
      });
      expect(JSON.parse(res.text)).to.deep.equal(res.body);
      expect(res.warnings).to.deep.equal(['first', 'second "quoted"', 'third']);
    });

    it('sends a string body as is; patch defaults to a merge patch, and an explicit content type wins', async () => {
      const raw = await http.put<{ body: string; contentType: string }>('/echo', '{"dup":1,"dup":2}');
      expect(raw.body.body).to.equal('{"dup":1,"dup":2}');
      expect(raw.body.contentType).to.equal('application/json');
      const patched = await http.patch<{ method: string; contentType: string }>('/echo', { x: null });
      expect(patched.body).to.include({ method: 'PATCH', contentType: 'application/merge-patch+json' });
      const json = await http.patch<{ contentType: string }>('/echo', [], {
        contentType: 'application/json-patch+json',
      });
      expect(json.body.contentType).to.equal('application/json-patch+json');
      const got = await http.get<{ method: string; contentType: string | null }>('/echo');
      expect(got.body).to.include({ method: 'GET', contentType: null });
    });

    it('keeps a body that is not JSON as text, an empty one as undefined, and any status as is', async () => {
      expect(await http.get('/readyz')).to.deep.include({ status: 200, body: 'ok', text: 'ok', warnings: [] });
      expect(await http.delete('/empty')).to.deep.include({ status: 204, body: undefined, text: '' });
      const missing = await http.get<{ reason: string }>('/missing');
      expect(missing.status).to.equal(404);
      expect(missing.body.reason).to.equal('NotFound');
    });

    it('must: the body on 2xx, an error naming method, path, status and text otherwise', async () => {
      expect(await http.must('GET', '/readyz')).to.equal('ok');
      const error = await http.must('GET', '/missing').then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).to.match(/^GET \/missing: HTTP 404: \{"kind":"Status"/);
    });

    it('a bearer token goes in the authorization header', async () => {
      const token = new KubeHttp({ server: url, caPem: ca.certPem, token: 'secret' });
      try {
        const res = await token.get<{ authorization: string; user: string | null }>('/echo');
        expect(res.body).to.include({ authorization: 'Bearer secret', user: null });
      } finally {
        token.close();
      }
    });

    it('rejects a server its CA did not sign', async () => {
      const other = createCertificateAuthority({ commonName: 'other', notBefore, validityDays: 1 });
      const stranger = new KubeHttp({ server: url, caPem: other.certPem });
      try {
        const error = await stranger.get('/readyz').then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(error).to.be.instanceOf(Error);
      } finally {
        stranger.close();
      }
    });

    it('signal aborts a request in flight', async () => {
      const abort = new AbortController();
      const pending = http.get('/hang', { signal: abort.signal }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      setTimeout(() => abort.abort(), 50);
      expect((await pending)?.name).to.equal('AbortError');
    });

    it('watch: one event per line (across chunks, blank lines skipped) until the server ends the stream', async () => {
      const events: unknown[] = [];
      await http.watch('/watch', {}, (e) => events.push(e));
      expect(events).to.deep.equal([
        { type: 'ADDED', object: { n: 1 } },
        { type: 'MODIFIED', object: { n: 2 } },
        { type: 'DELETED', object: { n: 3 } },
      ]);
    });

    it('watch: ends quietly when its signal aborts; throws on a non-200 answer', async () => {
      const abort = new AbortController();
      const events: unknown[] = [];
      await http.watch(
        '/watch',
        { hang: 1 },
        (e) => {
          events.push(e);
          if (events.length === 2) abort.abort();
        },
        abort.signal,
      );
      expect(events).to.have.length(2);
      const error = await http
        .watch('/forbidden', {}, () => {})
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      expect(error?.message).to.equal('watch /forbidden: HTTP 403');
    });
  });

  it('HttpsTransport.direct under KubeApi: warnings on every answer, ApiError on non-2xx', async () => {
    const transport = HttpsTransport.direct(
      { server: url, tls: { ca: ca.certPem, cert: client.certPem, key: client.keyPem } },
      { clock: new SystemClock() },
    );
    try {
      const res = await transport.request('POST', '/echo', { body: { a: 1 } });
      expect(res.warnings).to.deep.equal(['first', 'second "quoted"', 'third']);
      const error = await new KubeApi(transport).get(CONFIGMAPS, 'ns', 'x').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ApiError);
      expect(error).to.include({ code: 404, reason: 'NotFound', path: '/api/v1/namespaces/ns/configmaps/x' });
    } finally {
      transport.close();
    }
  });

  it('KubeHttp loads no @kubernetes/client-node (importing it costs seconds)', () => {
    const script = `
      import { registerHooks } from 'node:module';
      registerHooks({
        resolve(specifier, context, next) {
          if (specifier.startsWith('@kubernetes/client-node')) throw new Error('imported ' + specifier);
          return next(specifier, context);
        },
      });
      const { KubeHttp } = await import('./devenv/kube-http.ts');
      new KubeHttp({ server: 'https://127.0.0.1:1', caPem: '' }).close();
      console.log('ok');
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '--eval', script], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(out.trim()).to.equal('ok');
  });
});
