import { expect } from 'chai';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import {
  GADGET_OLD_SPEC,
  GADGET_OLD_STATUS,
  GADGET_UPDATE_NAME,
  PARITY_CASES,
  STATUS_UPDATE_CASES,
  UPDATE_CASES,
} from '../fixtures/schema/parity-cases.ts';
import {
  compareCase,
  compareUpdate,
  compareUpdateAt,
  storeRatchetOldObjects,
  type Verdict,
} from '../fixtures/schema/parity-compare.ts';
import {
  gadgetCrd,
  PARITY_CRDS,
  PARITY_GROUP,
  PARITY_VERSION,
  ratchetTightCrd,
} from '../fixtures/schema/parity-crds.ts';
import { fuzzCases } from '../fixtures/schema/parity-fuzz.ts';
import { testCluster } from '../support/shared.ts';

/**
 * The structural-schema engine against kube-apiserver: every case goes to the real API server as a
 * server-side dry-run create (with its fieldValidation) and to admit(); verdict, code, message,
 * every error, every warning and the resulting object must agree. See parity-compare.ts for the one
 * allowance: the order of errors in sibling properties, which Go's map iteration randomises.
 */
/** Seeded random objects on top of the written corpus; change the seed to explore, keep it to reproduce. */
const FUZZ = fuzzCases(20261129, 120);
const GADGET_PATH = `/apis/${PARITY_GROUP}/${PARITY_VERSION}/gadgets`;

describe('schema engine parity with kube-apiserver (server-side dry run)', function () {
  this.timeout(120_000);
  let client: KubeHttp;
  const verdicts = new Map<Verdict, number>();

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
    for (const crd of PARITY_CRDS) await installCrd(client, crd);
    // Update cases: the old objects are created under the loose schema, then the schema tightens.
    await storeRatchetOldObjects(client, 'upd-');
    // Status update cases: one stored Gadget with a status written through /status.
    const gadget = `${GADGET_PATH}/${GADGET_UPDATE_NAME}`;
    await client.must('POST', GADGET_PATH, {
      apiVersion: `${PARITY_GROUP}/${PARITY_VERSION}`,
      kind: 'Gadget',
      metadata: { name: GADGET_UPDATE_NAME },
      spec: GADGET_OLD_SPEC,
    });
    const stored = await client.must<Record<string, unknown>>('GET', gadget);
    await client.must('PUT', `${gadget}/status`, { ...stored, status: GADGET_OLD_STATUS });
  });

  after(async () => {
    const summary = [...verdicts].map(([v, n]) => `${n} ${v}`).join(', ');
    process.stdout.write(
      `      schema parity: ${PARITY_CASES.length + FUZZ.length + UPDATE_CASES.length + STATUS_UPDATE_CASES.length} cases: ${summary}\n`,
    );
    if (!client) return;
    for (const crd of [...PARITY_CRDS, ratchetTightCrd]) await uninstallCrd(client, crd.metadata.name);
  });

  it('has a corpus of at least 150 cases over several CRD schemas', () => {
    expect(PARITY_CASES.length + UPDATE_CASES.length).to.be.at.least(150);
    expect(new Set(PARITY_CASES.map((c) => c.plural)).size).to.be.at.least(4);
  });

  for (const c of [...PARITY_CASES, ...FUZZ]) {
    it(c.name, async () => {
      const result = await compareCase(client, PARITY_CRDS, c);
      verdicts.set(result.verdict, (verdicts.get(result.verdict) ?? 0) + 1);
      expect(result.verdict, result.differences.join('\n')).to.not.equal('different');
    });
  }

  for (const c of STATUS_UPDATE_CASES) {
    it(c.name, async () => {
      const change = (old: Record<string, unknown>) => {
        const next: Record<string, unknown> = { ...old, spec: c.spec };
        if (c.status === null) delete next.status;
        else if (c.status) next.status = c.status;
        return next;
      };
      const result = await compareUpdateAt(
        client,
        gadgetCrd,
        `${GADGET_PATH}/${GADGET_UPDATE_NAME}`,
        change,
        c.fieldValidation,
      );
      verdicts.set(result.verdict, (verdicts.get(result.verdict) ?? 0) + 1);
      expect(result.verdict, result.differences.join('\n')).to.not.equal('different');
    });
  }

  for (const [i, c] of UPDATE_CASES.entries()) {
    it(c.name, async () => {
      const result = await compareUpdate(client, ratchetTightCrd, c, `upd-${i}`);
      verdicts.set(result.verdict, (verdicts.get(result.verdict) ?? 0) + 1);
      expect(result.verdict, result.differences.join('\n')).to.not.equal('different');
    });
  }
});
