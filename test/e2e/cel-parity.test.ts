/**
 * Parity of webhook/cel with the real API server: every corpus case goes through kube-apiserver (dry-run create or
 * update of a custom resource; dry-run CRD creation for compile errors) and through compileRules()/evaluate();
 * verdict and message must be equal. Writes the per-case results to $CEL_PARITY_RESULTS (default: <os tmpdir>/cel-parity-results.json).
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { CustomResourceDefinition, JSONSchemaProps } from '../../crd/apiextensions.ts';
import { aggregateMessage, compileRules, evaluate } from '../../crd/cel/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { testCluster } from '../support/shared.ts';
import { singleVersionCrd } from '../support/single-version-crd.ts';
import { withoutRules } from '../support/without-rules.ts';
import { ADMISSION_CASES, type AdmissionCase, COMPILE_CASES } from './cel-parity-corpus.ts';

/** Per-case results (read by bench/cel-library-judge.ts). */
const PARITY_RESULTS_FILE = process.env.CEL_PARITY_RESULTS ?? join(tmpdir(), 'cel-parity-results.json');
const GROUP = 'cel.staticsite.test';
const NS = 'cel-parity';
const KIND = 'CelParity';
const PLURAL = 'celparities';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const objects = `/apis/${GROUP}/v1/namespaces/${NS}/${PLURAL}`;

function rootSchema(spec: JSONSchemaProps): JSONSchemaProps {
  return {
    type: 'object',
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec },
  };
}

function crd(plural: string, kind: string, schema: JSONSchemaProps): CustomResourceDefinition {
  return singleVersionCrd(GROUP, kind, plural, schema);
}

function customResource(name: string, value: unknown, spec: Record<string, unknown> = { [name]: value }) {
  return { apiVersion: `${GROUP}/v1`, kind: KIND, metadata: { name, namespace: NS }, spec };
}

interface Outcome {
  verdict: 'allowed' | 'denied' | 'other';
  message: string;
  /** Warning headers (ratcheted rule failures). */
  warnings?: string[];
}

interface Result {
  id: string;
  group: string;
  server: Outcome;
  ours: Outcome;
  equal: boolean;
}

/** Warnings are compared for allowed requests (a denied one carries its errors in the message). */
function sameWarnings(server: Outcome, ours: Outcome): boolean {
  return JSON.stringify(server.warnings ?? []) === JSON.stringify(ours.warnings ?? []);
}

function serverOutcome(res: { status: number; body: unknown; text: string; warnings?: string[] }): Outcome {
  if (res.status >= 200 && res.status < 300) return { verdict: 'allowed', message: '', warnings: res.warnings ?? [] };
  const message = (res.body as { message?: string })?.message ?? res.text;
  return { verdict: res.status === 422 ? 'denied' : 'other', message: `${res.status}: ${message}` };
}

describe('e2e: CEL parity with the API server', function () {
  this.timeout(600_000);
  let cp: ControlPlane;
  const results: Result[] = [];
  const specSchema: JSONSchemaProps = {
    type: 'object',
    properties: Object.fromEntries(ADMISSION_CASES.map((c, i) => [`c${i}`, c.schema])),
  };
  const schema = rootSchema(specSchema);
  const crdName = `${PLURAL}.${GROUP}`;

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await cp.ensureNamespace(NS);
    const ours = compileRules(schema);
    expect(ours.errors.map((e) => `${e.field}: ${e.detail}`)).to.deep.equal([]);
    const dryRun = await cp.admin.post(CRDS, crd(PLURAL, KIND, schema), { query: { dryRun: 'All' } });
    if (dryRun.status !== 201) throw new Error(`the API server rejects the corpus CRD: ${dryRun.text}`);
    // Ratcheting needs stored objects that violate rules: store them under a schema without those rules first.
    const withoutRatchetRules = rootSchema({
      type: 'object',
      properties: Object.fromEntries(
        ADMISSION_CASES.map((c, i) => [`c${i}`, c.storedBeforeRules ? withoutRules(c.schema) : c.schema]),
      ),
    });
    await installCrd(cp.admin, crd(PLURAL, KIND, withoutRatchetRules));
    for (const [i, c] of ADMISSION_CASES.entries()) {
      if (!c.storedBeforeRules) continue;
      await cp.admin.must('POST', objects, customResource(`c${i}`, c.old));
    }
    await installCrd(cp.admin, crd(PLURAL, KIND, schema));
    const probe = ADMISSION_CASES.findIndex((c) => c.storedBeforeRules);
    await eventually('the ratcheting rules are in force', async () => {
      const res = await cp.admin.post(
        objects,
        customResource(`probe`, undefined, { [`c${probe}`]: ADMISSION_CASES[probe]?.old }),
        { query: { dryRun: 'All' } },
      );
      return res.status === 422;
    });
  });

  after(async () => {
    writeFileSync(PARITY_RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    await uninstallCrd(cp.admin, crdName);
  });

  it(`admission: ${ADMISSION_CASES.length} rule/object cases give the API server's verdict and message`, async () => {
    const { compiled } = compileRules(schema);
    const run = async (c: AdmissionCase, i: number) => {
      const name = `c${i}`;
      const object = (value: unknown) => customResource(name, value);
      let res: { status: number; body: unknown; text: string; warnings: string[] };
      if (c.old === undefined) {
        res = await cp.admin.post(objects, object(c.value), { query: { dryRun: 'All' } });
      } else {
        const stored = c.storedBeforeRules
          ? await cp.admin.get<{ metadata: { resourceVersion: string } }>(`${objects}/${name}`)
          : await cp.admin.post<{ metadata: { resourceVersion: string } }>(objects, object(c.old));
        if (stored.status !== 201 && stored.status !== 200)
          throw new Error(`case ${name}: storing the old object failed: ${stored.text}`);
        const updated = object(c.value);
        res = await cp.admin.put(
          `${objects}/${name}`,
          { ...updated, metadata: { ...updated.metadata, resourceVersion: stored.body.metadata.resourceVersion } },
          { query: { dryRun: 'All' } },
        );
      }
      const server = serverOutcome(res);
      const evaluation = evaluate(compiled, object(c.value), c.old === undefined ? undefined : object(c.old));
      const ours: Outcome =
        evaluation.errors.length === 0
          ? { verdict: 'allowed', message: '', warnings: evaluation.warnings }
          : {
              verdict: 'denied',
              message: `422: ${KIND}.${GROUP} "${name}" is invalid: ${aggregateMessage(evaluation.errors)}`,
            };
      results.push({
        id: name,
        group: c.group,
        server,
        ours,
        equal: server.verdict === ours.verdict && server.message === ours.message && sameWarnings(server, ours),
      });
    };
    for (let i = 0; i < ADMISSION_CASES.length; i++) await run(ADMISSION_CASES[i] as AdmissionCase, i);
    const mismatches = results.filter((r) => !r.equal);
    expect(mismatches, JSON.stringify(mismatches, null, 2)).to.deep.equal([]);
  });

  it(`compile: ${COMPILE_CASES.length} invalid rules are rejected at CRD creation with the API server's message`, async () => {
    const mismatches: Result[] = [];
    for (let j = 0; j < COMPILE_CASES.length; j++) {
      const c = COMPILE_CASES[j] as (typeof COMPILE_CASES)[number];
      const plural = `compile${j}s`;
      const s = rootSchema({ type: 'object', properties: { x: c.schema } });
      const res = await cp.admin.post(CRDS, crd(plural, `Compile${j}`, s), { query: { dryRun: 'All' } });
      const server = serverOutcome(res);
      const { errors } = compileRules(s, { basePath: 'spec.validation.openAPIV3Schema' });
      const ours: Outcome =
        errors.length === 0
          ? { verdict: 'allowed', message: '' }
          : {
              verdict: 'denied',
              message: `422: CustomResourceDefinition.apiextensions.k8s.io "${plural}.${GROUP}" is invalid: ${aggregateMessage(errors)}`,
            };
      const r = {
        id: plural,
        group: `compile-${c.group}`,
        server,
        ours,
        equal: server.verdict === ours.verdict && server.message === ours.message,
      };
      results.push(r);
      if (!r.equal) mismatches.push(r);
    }
    expect(mismatches, JSON.stringify(mismatches, null, 2)).to.deep.equal([]);
  });
});
