import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { pino } from 'pino';
import request from 'supertest';
import { MemoryHostnameIndex } from '../../webhook/admission/hostname-index.ts';
import { createMutator } from '../../webhook/admission/mutate.ts';
import { SiteSchemas } from '../../webhook/admission/site-schemas.ts';
import { createValidator } from '../../webhook/admission/validate.ts';
import { createWebhookApp, createWebhookListener, type WebhookAppOptions } from '../../webhook/http/app.ts';
import { WebhookMetrics } from '../../webhook/http/metrics.ts';
import { DEFAULT_MAX_VALUES, exceedsDepth, shapeProblem } from '../../webhook/review/codec.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON that the tests edit in place
type Json = Record<string, any>;
const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as Json;
const decodePatch = (patch: string) => JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));

type CreateApp = (options: WebhookAppOptions) => Parameters<typeof request>[0];

/** Both ways the webhook serves HTTP: the Express app users drive with supertest, and the server's listener. */
const ADAPTERS: Array<[string, CreateApp]> = [
  ['the Express app', createWebhookApp],
  ["the HTTPS server's request listener (reviews bypass Express)", createWebhookListener],
];

function setup(
  create: CreateApp,
  options: {
    maxBodyBytes?: number;
    maxInFlightBytes?: number;
    throwing?: boolean;
    readiness?: WebhookAppOptions['readiness'];
  } = {},
) {
  const schemas = new SiteSchemas();
  const hostnames = new MemoryHostnameIndex();
  hostnames.synced = true;
  const metrics = new WebhookMetrics();
  const validate = createValidator({ schemas, hostnames });
  const app = create({
    mutate: createMutator({ schemas, baseDomain: 'sites.example.com' }),
    validate: options.throwing
      ? () => {
          throw new Error('boom with {"spec":{"content":"secret"}}');
        }
      : validate,
    metrics,
    logger: pino({ level: 'silent' }),
    maxBodyBytes: options.maxBodyBytes,
    maxInFlightBytes: options.maxInFlightBytes,
    readiness: options.readiness,
  });
  return { app, hostnames, metrics };
}

async function metricValue(metrics: WebhookMetrics, name: string, labels: Record<string, string>) {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

for (const [adapter, create] of ADAPTERS) {
  describe(`webhook via ${adapter}`, () => {
    describe('webhook: POST /mutate', () => {
      it('defaults replicas, tier and hostname and adds the finalizer on CREATE, as a JSONPatch echoing the uid', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1.json');
        const res = await request(app).post('/mutate').send(review).expect(200);
        expect(res.body.apiVersion).to.equal('admission.k8s.io/v1');
        expect(res.body.kind).to.equal('AdmissionReview');
        expect(res.body.response.uid).to.equal(review.request.uid);
        expect(res.body.response.allowed).to.equal(true);
        expect(res.body.response.patchType).to.equal('JSONPatch');
        expect(decodePatch(res.body.response.patch)).to.have.deep.members([
          { op: 'add', path: '/spec/replicas', value: 1 },
          { op: 'add', path: '/spec/tier', value: 'dev' },
          { op: 'add', path: '/spec/hostname', value: 'shop.web.sites.example.com' },
          { op: 'add', path: '/metadata/finalizers', value: ['staticsite.dev/external-record'] },
        ]);
      });

      it('gives the same patch for the same request twice, and no patch once applied (reinvocation)', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1.json');
        const first = await request(app).post('/mutate').send(review);
        const second = await request(app).post('/mutate').send(review);
        expect(second.body.response.patch).to.equal(first.body.response.patch);
        const applied = structuredClone(review);
        applied.request.object.spec = {
          content: '<h1>shop</h1>',
          replicas: 1,
          tier: 'dev',
          hostname: 'shop.web.sites.example.com',
        };
        applied.request.object.metadata.finalizers = ['staticsite.dev/external-record'];
        const third = await request(app).post('/mutate').send(applied);
        expect(third.body.response).to.deep.equal({ uid: review.request.uid, allowed: true });
      });

      it('prunes unknown fields with the API server warning, and answers v1beta1 in kind', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1beta1.json');
        const res = await request(app).post('/mutate').send(review).expect(200);
        expect(res.body.apiVersion).to.equal('admission.k8s.io/v1beta1');
        // Wording: apiextensions-apiserver customresource_handler.go, `unknown field "<path>"`.
        expect(res.body.response.warnings).to.deep.equal(['unknown field "spec.colour"']);
        const patch = decodePatch(res.body.response.patch);
        expect(patch).to.deep.include({ op: 'remove', path: '/spec/colour' });
        expect(patch.map((op: { path: string }) => op.path)).not.to.include('/spec/hostname');
      });

      it('never adds the finalizer on UPDATE or to an object being deleted', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1.json');
        review.request.operation = 'UPDATE';
        review.request.oldObject = review.request.object;
        const res = await request(app).post('/mutate').send(review);
        const paths = decodePatch(res.body.response.patch).map((op: { path: string }) => op.path);
        expect(paths).not.to.include('/metadata/finalizers');
      });

      it('leaves the hostname alone when the name is generated, and says so', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1.json');
        review.request.name = '';
        review.request.object.metadata = { generateName: 'shop-', namespace: 'web' };
        const res = await request(app).post('/mutate').send(review);
        expect(res.body.response.warnings).to.deep.equal([
          'spec.hostname was not defaulted: the name is generated by the server; set spec.hostname',
        ]);
      });

      it('answers a review of another kind with a 400 denial naming the kind', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/mutate').send(fixture('admission/create-configmap.json')).expect(200);
        expect(res.body.response.allowed).to.equal(false);
        expect(res.body.response.status).to.deep.include({
          code: 400,
          message: 'this webhook admits StaticSite.staticsite.dev objects, not ConfigMap',
        });
      });
    });

    describe('webhook: POST /validate', () => {
      it('allows DELETE without decoding the object', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/validate').send(fixture('admission/delete.json')).expect(200);
        expect(res.body.response).to.deep.equal({ uid: 'b7a3c1e2-0000-4000-8000-000000000003', allowed: true });
      });

      it('denies an OpenAPI violation with a 422 status in the API server wording', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1.json');
        review.request.object.spec = { content: '', replicas: 0, tier: 'qa' };
        const res = await request(app).post('/validate').send(review).expect(200);
        expect(res.body.response.allowed).to.equal(false);
        expect(res.body.response.status.code).to.equal(422);
        expect(res.body.response.status.reason).to.equal('Invalid');
        // Wording: kube-openapi validate errors (TooShort, TooSmall), field.NotSupported in apimachinery, and the
        // CEL-skipped note of apiextensions-apiserver registry/customresource/strategy.go (a NotSupported error blocks CEL).
        expect(res.body.response.status.message).to.equal(
          'StaticSite.staticsite.dev "shop" is invalid: [spec.content: Invalid value: "": spec.content in body should be at least 1 chars long, spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1, spec.tier: Unsupported value: "qa": supported values: "dev", "prod", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
        );
        expect(res.body.response.status.details.causes).to.have.length(4);
      });

      it('denies a hostname another StaticSite holds, and allows the holder itself', async () => {
        const { app, hostnames } = setup(create);
        hostnames.set({ namespace: 'other', name: 'first' }, 'shop.web.sites.example.com');
        const review = fixture('admission/create-v1.json');
        review.request.object.spec = { content: 'x', replicas: 1, tier: 'dev', hostname: 'shop.web.sites.example.com' };
        const res = await request(app).post('/validate').send(review);
        expect(res.body.response.allowed).to.equal(false);
        // field.Duplicate: `<path>: Duplicate value: <value>` (apimachinery field/errors.go).
        expect(res.body.response.status.message).to.equal(
          'StaticSite.staticsite.dev "shop" is invalid: spec.hostname: Duplicate value: "shop.web.sites.example.com"',
        );
        hostnames.set({ namespace: 'other', name: 'first' }, undefined);
        hostnames.set({ namespace: 'web', name: 'shop' }, 'shop.web.sites.example.com');
        const again = await request(app).post('/validate').send(review);
        expect(again.body.response.allowed).to.equal(true);
      });

      it('never blocks an update that keeps its hostname, or any write to a terminating site, even when another site shares it', async () => {
        const { app, hostnames } = setup(create);
        const shared = 'shop.web.sites.example.com';
        hostnames.set({ namespace: 'other', name: 'first' }, shared);
        hostnames.set({ namespace: 'web', name: 'shop' }, shared);
        const site = (extra: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
          apiVersion: 'staticsite.dev/v1',
          kind: 'StaticSite',
          metadata: { name: 'shop', namespace: 'web', finalizers: ['staticsite.dev/external-record'], ...extra },
          spec: { content: 'x', replicas: 1, tier: 'dev', hostname: shared, ...spec },
        });
        const update = (object: unknown, oldObject: unknown) => {
          const review = fixture('admission/update-tier-change.json');
          review.request.object = object;
          review.request.oldObject = oldObject;
          return request(app).post('/validate').send(review);
        };
        const contentChange = await update(site({}, { content: 'y' }), site());
        expect(contentChange.body.response.allowed, JSON.stringify(contentChange.body)).to.equal(true);
        const deleting = { deletionTimestamp: '2026-12-01T10:00:00Z', deletionGracePeriodSeconds: 0 };
        const finalizerRemoved = await update(site({ ...deleting, finalizers: [] }), site(deleting));
        expect(finalizerRemoved.body.response.allowed, JSON.stringify(finalizerRemoved.body)).to.equal(true);
        const moving = await update(
          site({}, { hostname: 'shop.example.com' }),
          site({}, { hostname: 'old.example.com' }),
        );
        expect(moving.body.response.allowed).to.equal(true);
        hostnames.set({ namespace: 'other', name: 'first' }, 'shop.example.com');
        const movingOnto = await update(
          site({}, { hostname: 'shop.example.com' }),
          site({}, { hostname: 'old.example.com' }),
        );
        expect(movingOnto.body.response.status.message).to.include('Duplicate value: "shop.example.com"');
      });

      it('allows the review kube-apiserver sent for a create it then stored (captured fixture)', async () => {
        const { app } = setup(create);
        // test/support/capture-admission-review.ts: compact JSON with managedFields, userInfo and options.
        const review = fixture('admission/apiserver-validate-create.json');
        const res = await request(app).post('/validate').send(review).expect(200);
        expect(res.body).to.deep.equal({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true },
        });
      });

      it('decodes a UTF-8 body with multi-byte characters as it decodes an ASCII one', async () => {
        const { app } = setup(create);
        const review = fixture('admission/create-v1.json');
        const name = 'shöp-日本-🚀'; // 2-, 3- and 4-byte UTF-8 sequences
        review.request.object.metadata.name = name;
        const utf8 = await request(app)
          .post('/validate')
          .set('content-type', 'application/json')
          .send(JSON.stringify(review));
        const escaped = await request(app)
          .post('/validate')
          .set('content-type', 'application/json')
          .send(
            JSON.stringify(review).replace(/[^ -~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
          );
        // strconv.Quote keeps printable non-ASCII runes as they are, so the value comes back unchanged.
        expect(utf8.body.response.status.message).to.include(`metadata.name: Invalid value: "${name}"`);
        expect(escaped.body.response.status).to.deep.equal(utf8.body.response.status);
      });

      it('reads the hostname of a v1alpha1 object from its annotation for the unique rule', async () => {
        const { app, hostnames } = setup(create);
        hostnames.set({ namespace: 'other', name: 'first' }, 'blog.example.com');
        const review = fixture('admission/create-v1beta1.json');
        review.request.object.spec = { content: 'x', replicas: 1, tier: 'dev' };
        review.request.object.metadata.annotations = { 'staticsite.dev/hostname': 'blog.example.com' };
        const res = await request(app).post('/validate').send(review);
        expect(res.body.response.allowed).to.equal(false);
        expect(res.body.response.status.message).to.include('Duplicate value: "blog.example.com"');
      });

      it('runs the CEL rules: prod with 1 replica is denied with the CRD message', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/validate').send(fixture('admission/create-prod-one-replica.json'));
        expect(res.body.response.allowed).to.equal(false);
        // The text the real API server gives for the same rule (test/e2e/controlplane.test.ts).
        expect(res.body.response.status.message).to.equal(
          'StaticSite.staticsite.dev "shop" is invalid: spec: Invalid value: prod sites need at least 2 replicas',
        );
      });

      it('runs the transition rule on UPDATE: tier is immutable', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/validate').send(fixture('admission/update-tier-change.json'));
        expect(res.body.response.allowed).to.equal(false);
        expect(res.body.response.status.message).to.equal(
          'StaticSite.staticsite.dev "shop" is invalid: spec.tier: Invalid value: "prod": tier is immutable',
        );
      });

      it('ratchets: a rule failing on a value the update did not change is a warning, not a denial', async () => {
        const { app } = setup(create);
        const review = fixture('admission/update-tier-change.json');
        review.request.oldObject.spec = { content: 'a', replicas: 1, tier: 'dev', hostname: 'UPPER.example.com' };
        review.request.object.spec = { content: 'b', replicas: 1, tier: 'dev', hostname: 'UPPER.example.com' };
        const res = await request(app).post('/validate').send(review);
        expect(res.body.response.allowed).to.equal(true);
        expect(res.body.response.warnings).to.deep.equal([
          "spec.hostname: Invalid value: \"UPPER.example.com\": hostname must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character",
        ]);
      });

      it('an UPDATE without oldObject is a 400 denial', async () => {
        const { app } = setup(create);
        const review = fixture('admission/update-tier-change.json');
        delete review.request.oldObject;
        const res = await request(app).post('/validate').send(review);
        expect(res.body.response.status).to.deep.include({ code: 400, message: 'UPDATE request has no oldObject' });
      });
    });

    describe('webhook: POST /convert', () => {
      it('converts v1 to v1alpha1, keeping the hostname in the annotation', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/convert').send(fixture('conversion/v1-to-v1alpha1.json')).expect(200);
        expect(res.body.response.uid).to.equal('0000-conv-0001');
        expect(res.body.response.result).to.deep.equal({ status: 'Success' });
        const [object] = res.body.response.convertedObjects;
        expect(object.apiVersion).to.equal('staticsite.dev/v1alpha1');
        expect(object.metadata.annotations).to.deep.equal({ 'staticsite.dev/hostname': 'shop.example.com' });
        expect(object.spec).to.deep.equal({ content: '<h1>shop</h1>', replicas: 2, tier: 'prod' });
        expect(object.status).to.deep.equal({ readyReplicas: 2 });
      });

      it('passes numbers through digit for digit, also integers beyond 2^53 (the API server holds int64)', async () => {
        const { app } = setup(create);
        const review = fixture('conversion/v1-to-v1alpha1.json') as {
          request: { objects: Array<Record<string, unknown>> };
        };
        const object = review.request.objects[0] as Record<string, unknown>;
        const body = JSON.stringify({
          ...review,
          request: { ...review.request, objects: [{ ...object, extra: { big: 1, small: 2, ratio: 3 } }] },
        })
          .replace('"big":1', '"big":9007199254740993')
          .replace('"small":2', '"small":-9223372036854775808')
          .replace('"ratio":3', '"ratio":0.1');
        const res = await request(app).post('/convert').set('content-type', 'application/json').send(body).expect(200);
        expect(res.text).to.include('"extra":{"big":9007199254740993,"small":-9223372036854775808,"ratio":0.1}');
      });

      it('reports an object it cannot convert as a Failure result naming it, not a crash', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/convert').send(fixture('conversion/bad-object.json')).expect(200);
        expect(res.body.response.result).to.deep.equal({
          status: 'Failure',
          message: 'cannot convert web/odd to staticsite.dev/v1: unsupported apiVersion "staticsite.dev/v9"',
        });
        expect(res.body.response.convertedObjects).to.deep.equal([]);
      });
    });

    describe('webhook: bad input', () => {
      const cases: Array<[string, (r: request.Test) => request.Test, number, string]> = [
        ['an empty body', (r) => r.set('content-type', 'application/json'), 400, 'request body is empty'],
        [
          'a wrong content type',
          (r) => r.set('content-type', 'text/plain').send('hello'),
          415,
          'contentType=text/plain, expected application/json',
        ],
        [
          'a body that is not JSON',
          (r) => r.set('content-type', 'application/json').send('{"apiVersion":'),
          400,
          'request body is not valid JSON: ',
        ],
        ['a JSON array', (r) => r.send([1, 2]), 400, 'the body is not a JSON object: expected an AdmissionReview'],
        [
          'another kind',
          (r) => r.send({ apiVersion: 'admission.k8s.io/v1', kind: 'Pod' }),
          400,
          'expected kind "AdmissionReview", got "Pod"',
        ],
        [
          'an unknown apiVersion',
          (r) => r.send({ apiVersion: 'admission.k8s.io/v2', kind: 'AdmissionReview' }),
          400,
          'unsupported AdmissionReview apiVersion "admission.k8s.io/v2": expected admission.k8s.io/v1 or admission.k8s.io/v1beta1',
        ],
        [
          'no request',
          (r) => r.send({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
          400,
          'AdmissionReview has no request',
        ],
        [
          'no uid',
          (r) =>
            r.send({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }),
          400,
          'AdmissionReview request has no uid',
        ],
        [
          'an unknown operation',
          (r) =>
            r.send({
              apiVersion: 'admission.k8s.io/v1',
              kind: 'AdmissionReview',
              request: { uid: 'u', operation: 'PATCH' },
            }),
          400,
          'AdmissionReview request has an unknown operation "PATCH": expected CREATE, UPDATE, DELETE or CONNECT',
        ],
        // Found by test/e2e/webhook-fuzz.test.ts (seeds 29 and 44): a number or an object where a string goes.
        [
          'a request name that is not a string',
          (r) => {
            const review = fixture('admission/create-v1beta1.json');
            review.request.name = 9007199254740992;
            review.request.object.metadata.name = null;
            return r.send(review);
          },
          400,
          'AdmissionReview request.name must be a string',
        ],
        [
          'a kind whose group is not a string',
          (r) => {
            const review = fixture('admission/create-v1.json');
            review.request.kind.group = { toString: 'x' };
            return r.send(review);
          },
          400,
          'AdmissionReview request has no kind (group, version, kind)',
        ],
      ];
      for (const [what, build, code, message] of cases) {
        it(`${what}: ${code} with a message naming the problem`, async () => {
          const { app } = setup(create);
          const res = await build(request(app).post('/validate')).expect(code);
          expect(res.body).to.deep.include({ kind: 'Status', status: 'Failure', code });
          expect(res.body.message.startsWith(message), res.body.message).to.equal(true);
        });
      }

      it('bodies past the in-flight budget: 429 naming it; the budget comes back when the answer is out', async () => {
        const review = fixture('admission/create-v1.json');
        const size = Buffer.byteLength(JSON.stringify(review));
        const { app } = setup(create, { maxInFlightBytes: size - 1 });
        const res = await request(app).post('/validate').send(review).expect(429);
        expect(res.body).to.deep.include({ code: 429, reason: 'TooManyRequests' });
        expect(res.body.message).to.equal(`the webhook holds ${size - 1} bytes of request bodies already; retry later`);
        const roomy = setup(create, { maxInFlightBytes: size });
        for (let i = 0; i < 3; i++) await request(roomy.app).post('/validate').send(review).expect(200);
      });

      it('a body over the limit: 413 with the limit in the message', async () => {
        const { app } = setup(create, { maxBodyBytes: 1024 });
        const review = fixture('admission/create-v1.json');
        review.request.object.spec.content = 'x'.repeat(2000);
        const res = await request(app).post('/validate').send(review).expect(413);
        expect(res.body.message).to.equal('request entity is too large; limit is 1024 bytes');
      });

      it('a deeply nested object: 400, and the server keeps serving', async () => {
        const { app } = setup(create);
        const review = JSON.stringify(fixture('admission/create-v1.json'));
        const deep = `${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}`;
        const body = review.replace('"spec":{', `"spec":{"extra":${deep},`);
        const res = await request(app).post('/validate').set('content-type', 'application/json').send(body).expect(400);
        expect(res.body.message).to.equal('request body nests deeper than 100 levels');
        await request(app).post('/validate').send(fixture('admission/delete.json')).expect(200);
      });

      it('an exception in a handler: 500, a metric, and no object text in the answer', async () => {
        const { app, metrics } = setup(create, { throwing: true });
        const res = await request(app).post('/validate').send(fixture('admission/create-v1.json')).expect(500);
        expect(res.body.message).to.equal('internal error while handling the review; see the webhook log');
        expect(res.text).not.to.include('secret');
        expect(await metricValue(metrics, 'staticsite_webhook_handler_panics_total', { path: '/validate' })).to.equal(
          1,
        );
        await request(app).post('/mutate').send(fixture('admission/create-v1.json')).expect(200);
      });

      it('an unknown path: 404 naming the routes', async () => {
        const { app } = setup(create);
        const res = await request(app).post('/admit').send({}).expect(404);
        expect(res.body.message).to.equal('no route for POST /admit: use POST /mutate, /validate or /convert');
      });

      it('counts requests by path, operation and outcome', async () => {
        const { app, metrics } = setup(create);
        await request(app).post('/mutate').send(fixture('admission/create-v1.json'));
        await request(app).post('/validate').send(fixture('admission/delete.json'));
        expect(
          await metricValue(metrics, 'staticsite_webhook_requests_total', {
            path: '/mutate',
            operation: 'CREATE',
            outcome: 'patched',
          }),
        ).to.equal(1);
        expect(
          await metricValue(metrics, 'staticsite_webhook_requests_total', {
            path: '/validate',
            operation: 'DELETE',
            outcome: 'allowed',
          }),
        ).to.equal(1);
      });
    });

    it("counts what controller-runtime's webhook metrics count: by webhook path and HTTP code, latency, in flight", async () => {
      const { app, metrics } = setup(create);
      expect(
        await metricValue(metrics, 'controller_runtime_webhook_requests_total', { webhook: '/mutate', code: '500' }),
      ).to.equal(0);
      await request(app).post('/validate').send(fixture('admission/delete.json')).expect(200);
      await request(app).post('/validate').set('content-type', 'text/plain').send('x').expect(415);
      await new Promise((resolve) => setImmediate(resolve));
      expect(
        await metricValue(metrics, 'controller_runtime_webhook_requests_total', { webhook: '/validate', code: '200' }),
      ).to.equal(1);
      expect(
        await metricValue(metrics, 'controller_runtime_webhook_requests_total', { webhook: '/validate', code: '415' }),
      ).to.equal(1);
      const latency = (await metrics.registry.getSingleMetric('controller_runtime_webhook_latency_seconds')?.get())
        ?.values;
      expect(
        latency?.find(
          (v) =>
            (v as { metricName?: string }).metricName === 'controller_runtime_webhook_latency_seconds_count' &&
            v.labels.webhook === '/validate',
        )?.value,
      ).to.equal(2);
      expect(
        await metricValue(metrics, 'controller_runtime_webhook_requests_in_flight', { webhook: '/validate' }),
      ).to.equal(0);
    });

    it('serves POST /validate with the ?timeout= query the API server adds, and answers GET with 404', async () => {
      const { app } = setup(create);
      const review = fixture('admission/delete.json');
      const res = await request(app).post('/validate?timeout=10s').send(review).expect(200);
      expect(res.body.response).to.deep.equal({ uid: review.request.uid, allowed: true });
      const get = await request(app).get('/validate').expect(404);
      expect(get.body.message).to.equal('no route for GET /validate: use POST /mutate, /validate or /convert');
    });

    it('answers /healthz and /readyz as k8s.io/apiserver healthz.go does', async () => {
      const { app } = setup(create);
      expect((await request(app).get('/healthz').expect(200)).text).to.equal('ok');
      expect((await request(app).get('/readyz').expect(200)).text).to.equal('ok');
      expect((await request(app).get('/readyz?verbose').expect(200)).text).to.equal(
        '[+]ping ok\nreadyz check passed\n',
      );
      const failing = setup(create, {
        readiness: [{ name: 'staticsite-cache', check: () => ({ ok: false, reason: 'not synced' }) }],
      });
      const res = await request(failing.app).get('/readyz').expect(500);
      expect(res.text).to.equal('[-]staticsite-cache failed: reason withheld\nreadyz check failed\n');
    });

    it('routes as Express does: paths case-insensitive with an optional trailing slash; probes exact', async () => {
      const { app } = setup(create);
      const review = fixture('admission/delete.json');
      for (const path of ['/VALIDATE', '/validate/', '/Validate/?timeout=10s']) {
        const res = await request(app).post(path).send(review).expect(200);
        expect(res.body.response).to.deep.equal({ uid: review.request.uid, allowed: true });
      }
      expect((await request(app).head('/healthz').expect(200)).text).to.equal(undefined);
      for (const path of ['/readyz/', '/READYZ']) {
        const res = await request(app).get(path).expect(404);
        expect(res.body.message).to.equal(`no route for GET ${path}: use POST /mutate, /validate or /convert`);
      }
      const post = await request(app).post('/healthz').send({}).expect(404);
      expect(post.body.message).to.equal('no route for POST /healthz: use POST /mutate, /validate or /convert');
    });

    it('a probe that throws: 500 and a metric, and the server keeps serving', async () => {
      const { app, metrics } = setup(create, {
        readiness: [
          {
            name: 'staticsite-cache',
            check: () => {
              throw new Error('cache gone');
            },
          },
        ],
      });
      const res = await request(app).get('/readyz').expect(500);
      expect(res.body).to.deep.include({ kind: 'Status', code: 500, reason: 'InternalError' });
      expect(res.text).not.to.include('cache gone');
      expect(await metricValue(metrics, 'staticsite_webhook_handler_panics_total', { path: '/readyz' })).to.equal(1);
      await request(app).post('/validate').send(fixture('admission/delete.json')).expect(200);
    });
  });
}

describe('webhook: request body depth', () => {
  const nested = (depth: number, wrap: (inner: unknown) => unknown) => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = wrap(value);
    return value;
  };
  const text = (value: unknown) => Buffer.from(JSON.stringify(value));
  it('counts objects and arrays as levels: exactly the limit passes, one more fails', () => {
    for (const wrap of [(v: unknown) => ({ a: v }), (v: unknown) => [v]]) {
      expect(exceedsDepth(text(nested(100, wrap)), 100)).to.equal(false);
      expect(exceedsDepth(text(nested(101, wrap)), 100)).to.equal(true);
    }
    expect(exceedsDepth(text({ a: [1, { b: 'x' }], c: null }), 2)).to.equal(true);
    expect(exceedsDepth(text({ a: [1, { b: 'x' }], c: null }), 3)).to.equal(false);
  });

  it('counts every value against the value limit: exactly the limit passes, one more fails', () => {
    // {a: [1, {b: 'x'}], c: null}: the root, a, 1, {b}, 'x', c: six values.
    expect(shapeProblem(text({ a: [1, { b: 'x' }], c: null }), 10, 6)).to.equal(undefined);
    expect(shapeProblem(text({ a: [1, { b: 'x' }], c: null }), 10, 5)).to.equal('values');
    // Keys are not values; brackets, commas and colons inside strings are not structure; nor are escaped quotes.
    const tricky = Buffer.from(' { "[{,:\\"]" : [ "}", -1.5e3 , true,{}] , "k":"\\\\"}');
    expect(JSON.parse(tricky.toString())).to.be.an('object');
    expect(shapeProblem(tricky, 10, 7)).to.equal(undefined);
    expect(shapeProblem(tricky, 10, 6)).to.equal('values');
    expect(shapeProblem(tricky, 3, 100)).to.equal(undefined);
    expect(shapeProblem(tricky, 2, 100)).to.equal('depth');
  });

  it('a review with more values than the limit is a 400 naming it', async () => {
    const { app } = setup(createWebhookApp);
    const review = fixture('admission/create-v1.json');
    const spec: Record<string, number> = { content: 1 };
    for (let i = 0; i < DEFAULT_MAX_VALUES; i++) spec[`f${i}`] = i;
    review.request.object.spec = spec;
    const res = await request(app).post('/validate').send(review).expect(400);
    expect(res.body.message).to.equal(`request body holds more than ${DEFAULT_MAX_VALUES} JSON values`);
  });
});

describe('webhook: request metrics', () => {
  it('counts each request once, however often it is scraped', async () => {
    const { app, metrics } = setup(createWebhookListener);
    await request(app).post('/validate').send(fixture('admission/delete.json'));
    const labels = { path: '/validate', operation: 'DELETE', outcome: 'allowed' };
    expect(await metricValue(metrics, 'staticsite_webhook_requests_total', labels)).to.equal(1);
    expect(await metricValue(metrics, 'staticsite_webhook_requests_total', labels)).to.equal(1);
    await request(app).post('/validate').send(fixture('admission/delete.json'));
    expect(await metricValue(metrics, 'staticsite_webhook_requests_total', labels)).to.equal(2);
    const text = await metrics.registry.metrics();
    expect(text).to.include(
      'staticsite_webhook_requests_total{path="/validate",operation="DELETE",outcome="allowed"} 2',
    );
    expect(text).to.match(/staticsite_webhook_request_duration_seconds_count\{path="\/validate"\} 2/);
  });

  it("records each request once, in both families alike: ours by outcome, controller-runtime's by code", async () => {
    const { app, metrics } = setup(createWebhookListener, { maxBodyBytes: 64 });
    await request(app).post('/validate').send(fixture('admission/delete.json')).expect(413);
    await request(app).post('/validate').set('content-type', 'text/plain').send('x').expect(415);
    await request(app).post('/mutate').set('content-type', 'application/json').send('{}').expect(400);
    const series = async (name: string) =>
      ((await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [])
        .filter((v) => v.value > 0)
        .map((v) => ({ ...v.labels, value: v.value }));
    expect(await series('staticsite_webhook_requests_total')).to.have.deep.members([
      { path: '/validate', operation: '', outcome: 'bad_request', value: 2 },
      { path: '/mutate', operation: '', outcome: 'bad_request', value: 1 },
    ]);
    expect(await series('controller_runtime_webhook_requests_total')).to.have.deep.members([
      { webhook: '/validate', code: '413', value: 1 },
      { webhook: '/validate', code: '415', value: 1 },
      { webhook: '/mutate', code: '400', value: 1 },
    ]);
    const text = await metrics.registry.metrics();
    expect(text).to.match(/^staticsite_webhook_request_duration_seconds_count\{path="\/validate"\} 2$/m);
    expect(text).to.match(/^controller_runtime_webhook_latency_seconds_count\{webhook="\/validate"\} 2$/m);
    expect(text).to.match(/^controller_runtime_webhook_requests_in_flight\{webhook="\/validate"\} 0$/m);
    expect(text).to.not.include('staticsite_webhook_requests_in_flight');
  });
});
