/**
 * The Go oracle pinned to the real kube-apiserver: the differential runs trust the oracle's answers
 * only because this suite shows they are the server's. Every case goes to the server (server-side
 * dry run) and to the oracle; code, message, every cause, every warning and the object must agree
 * (errors of sibling properties in any order: both are Go, and Go's map order is random).
 * Cases: the schema parity corpus and its seeded objects, the ratcheting updates after a schema
 * change, the CEL compile corpus as CRD creations, and generated CRDs with generated objects,
 * created and updated.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { CustomResourceDefinition, JSONSchemaProps } from '../../api/index.ts';
import { CrdOracle, type OracleObservation } from '../../devenv/crd-oracle.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { caseArb, type DifferentialCase } from '../fixtures/differential/differential.ts';
import { PARITY_CASES, UPDATE_CASES } from '../fixtures/schema/parity-cases.ts';
import {
  compareWith,
  type Observation,
  observeServer,
  PARITY_NAMESPACE,
  RATCHET_PATH,
  storeRatchetOldObjects,
  stripStamps,
} from '../fixtures/schema/parity-compare.ts';
import { PARITY_CRDS, PARITY_VERSION, ratchetTightCrd } from '../fixtures/schema/parity-crds.ts';
import { fuzzCases } from '../fixtures/schema/parity-fuzz.ts';
import { testCluster } from '../support/shared.ts';
import { singleVersionCrd } from '../support/single-version-crd.ts';
import { COMPILE_CASES } from './cel-parity-corpus.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
/** Generated CRDs sent to the server; each is installed, so the sample stays small. */
const GENERATED = 40;
const GENERATED_SEED = 20261203;

function asObservation(o: OracleObservation | undefined): Observation {
  if (!o) throw new Error('the oracle gave no admission');
  const ok = o.code >= 200 && o.code < 300;
  return {
    code: ok ? 200 : o.code,
    message: o.message,
    causes: o.causes.map((x) => ({ reason: x.reason, message: x.message, field: x.field })),
    warnings: o.warnings,
    object: ok ? stripStamps(o.object) : undefined,
  };
}

type Response = { status: number; body: unknown; text: string; warnings: string[] };

function serverObservation(res: Response): Observation {
  const ok = res.status >= 200 && res.status < 300;
  const body = res.body as { message?: string; details?: { causes?: Observation['causes'] } } | undefined;
  return {
    code: ok ? 200 : res.status,
    message: ok ? '' : (body?.message ?? res.text),
    causes: (body?.details?.causes ?? []).map((x) => ({ reason: x.reason, message: x.message, field: x.field })),
    warnings: res.warnings.map((w) => Buffer.from(w, 'latin1').toString('utf8')),
    object: ok ? stripStamps(res.body) : undefined,
  };
}

/** A generated case under a CRD of its own name, so that each can be installed beside the others. */
function renamed(c: DifferentialCase, i: number): DifferentialCase {
  const crd = structuredClone(c.crd);
  const kind = `G${i}`;
  crd.spec.names = { kind, listKind: `${kind}List`, plural: `g${i}s`, singular: `g${i}` };
  crd.metadata.name = `g${i}s.${crd.spec.group}`;
  return { ...c, crd, object: { ...c.object, kind } };
}

describe('e2e: the Go oracle gives the API server answers', function () {
  this.timeout(600_000);
  let client: KubeHttp;
  let oracle: CrdOracle;
  const installed: string[] = [];

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
    oracle = await CrdOracle.start();
    for (const crd of PARITY_CRDS) await installCrd(client, crd);
  });

  after(async () => {
    await oracle?.close();
    if (!client) return;
    for (const name of [...PARITY_CRDS.map((c) => c.metadata.name), ratchetTightCrd.metadata.name, ...installed])
      await uninstallCrd(client, name);
  });

  it('schema corpus and seeded objects: the same verdict, message, causes, warnings and object', async () => {
    const different: string[] = [];
    for (const c of [...PARITY_CASES, ...fuzzCases(20261129, 120)]) {
      const crd = PARITY_CRDS.find((x) => x.spec.names.plural === c.plural) as CustomResourceDefinition;
      const answer = await oracle.ask({
        crd,
        version: PARITY_VERSION,
        fieldValidation: c.fieldValidation,
        object: c.object,
        ...(c.namespaced && { namespace: PARITY_NAMESPACE }),
      });
      const result = await compareWith(asObservation(answer.admission), () => observeServer(client, c), 12);
      if (result.verdict === 'different') different.push(`${c.name}: ${result.differences.join('; ')}`);
    }
    expect(different).to.deep.equal([]);
  });

  it('updates after a schema change: ratcheting as the server does it', async () => {
    await storeRatchetOldObjects(client, 'oracle-');
    const different: string[] = [];
    for (const [i, c] of UPDATE_CASES.entries()) {
      const path = `${RATCHET_PATH}/oracle-${i}`;
      const old = await client.must<{ metadata: Record<string, unknown> } & Record<string, unknown>>('GET', path);
      const next = { ...old, metadata: { ...old.metadata, ...(c.labels && { labels: c.labels }) }, spec: c.spec };
      const answer = await oracle.ask({
        crd: ratchetTightCrd,
        version: PARITY_VERSION,
        namespace: PARITY_NAMESPACE,
        fieldValidation: c.fieldValidation,
        object: next,
        oldObject: old,
      });
      const send = async () =>
        serverObservation(
          await client.put(path, next, { query: { dryRun: 'All', fieldValidation: c.fieldValidation } }),
        );
      const result = await compareWith(asObservation(answer.admission), send, 12);
      if (result.verdict === 'different') different.push(`${c.name}: ${result.differences.join('; ')}`);
    }
    expect(different).to.deep.equal([]);
  });

  it('CRD creation: the CEL compile corpus refused with the same causes', async () => {
    const different: string[] = [];
    for (const [j, c] of COMPILE_CASES.entries()) {
      const schema: JSONSchemaProps = {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: { type: 'object', properties: { x: c.schema } },
        },
      };
      const crd = singleVersionCrd('cel.staticsite.test', `Compile${j}`, `compile${j}s`, schema);
      const oracleCrd = asObservation((await oracle.ask({ crd })).crd);
      const send = async () => serverObservation(await client.post(CRDS, crd, { query: { dryRun: 'All' } }));
      const result = await compareWith(
        { ...oracleCrd, object: undefined },
        async () => ({ ...(await send()), object: undefined }),
        12,
      );
      if (result.verdict === 'different') different.push(`compile ${j} (${c.group}): ${result.differences.join('; ')}`);
    }
    expect(different).to.deep.equal([]);
  });

  it(`generated CRDs and objects (${GENERATED}, seed ${GENERATED_SEED}): created and updated as the server does`, async () => {
    const different: string[] = [];
    let admitted = 0;
    const cases = fc.sample(caseArb, { seed: GENERATED_SEED, numRuns: GENERATED }).map(renamed);
    // Each case has its own CRD: four at once, as most of a case is waiting for its CRD to be served.
    const runCase = async (c: (typeof cases)[number], i: number) => {
      const oracleCrd = asObservation((await oracle.ask({ crd: c.crd })).crd);
      const dryRun = async () => ({
        ...serverObservation(await client.post(CRDS, c.crd, { query: { dryRun: 'All' } })),
        object: undefined,
      });
      const crdResult = await compareWith({ ...oracleCrd, object: undefined }, dryRun, 12);
      if (crdResult.verdict === 'different') {
        different.push(`case ${i} CRD: ${crdResult.differences.join('; ')}`);
        return;
      }
      if (oracleCrd.code !== 200) return;
      await installCrd(client, c.crd);
      installed.push(c.crd.metadata.name);
      const namespaced = c.crd.spec.scope !== 'Cluster';
      const collection = `/apis/${c.crd.spec.group}/v1${namespaced ? `/namespaces/${PARITY_NAMESPACE}` : ''}/${c.crd.spec.names.plural}`;
      const base = {
        crd: c.crd,
        version: 'v1',
        fieldValidation: c.fieldValidation,
        ...(namespaced && { namespace: PARITY_NAMESPACE }),
      };
      const created = await oracle.ask({ ...base, object: c.object });
      const createResult = await compareWith(
        asObservation(created.admission),
        async () =>
          serverObservation(
            await client.post(collection, c.object, { query: { dryRun: 'All', fieldValidation: c.fieldValidation } }),
          ),
        12,
      );
      if (createResult.verdict === 'different')
        different.push(`case ${i} create: ${createResult.differences.join('; ')}`);
      if (created.admission?.code === 200) admitted++;
      if (c.operation === 'create') return;
      // An update: the old object stored for real (unvalidated fields ignored), then a dry-run PUT.
      const first = { ...c.object, metadata: { name: `old-${i}` }, spec: c.oldSpec };
      const stored = await client.post<Record<string, unknown>>(collection, first, {
        query: { fieldValidation: 'Ignore' },
      });
      if (stored.status !== 201) return;
      const old = stored.body as { metadata: Record<string, unknown> } & Record<string, unknown>;
      const next =
        c.operation === 'update-unchanged'
          ? structuredClone(old)
          : { ...structuredClone(old), spec: c.object.spec, ...(c.object.status ? { status: c.object.status } : {}) };
      const updated = await oracle.ask({ ...base, object: next, oldObject: old });
      const path = `${collection}/old-${i}`;
      const updateResult = await compareWith(
        asObservation(updated.admission),
        async () =>
          serverObservation(
            await client.put(path, next, { query: { dryRun: 'All', fieldValidation: c.fieldValidation } }),
          ),
        12,
      );
      if (updateResult.verdict === 'different')
        different.push(`case ${i} update: ${updateResult.differences.join('; ')}`);
    };
    let nextCase = 0;
    const worker = async () => {
      while (nextCase < cases.length) {
        const i = nextCase++;
        await runCase(cases[i] as (typeof cases)[number], i);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    different.sort();
    expect(different).to.deep.equal([]);
    expect(admitted, 'some generated objects are admitted').to.be.greaterThan(0);
  });
});
