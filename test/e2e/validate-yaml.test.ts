/**
 * `staticsite validate` reads YAML as kubectl does: every plain scalar below is resolved by the
 * kubectl built with the control plane (sigs.k8s.io/yaml over go-yaml v2, then encoding/json) and
 * by our reader, and the two must agree; the expected values are kubectl's output, not ours.
 */
import { expect } from 'chai';
import { documentsOf } from '../../cli/validate/documents.ts';
import { testCluster } from '../support/shared.ts';

/** Plain scalars whose reading differs between YAML 1.1, YAML 1.2 and go-yaml. */
const SCALARS = [
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'n',
  'NO',
  'on',
  'Off',
  'true',
  'False',
  'TRUE',
  'yEs',
  'tRue',
  '~',
  'null',
  'Null',
  'NULL',
  'nULL',
  '',
  '0',
  '-0',
  '+12',
  '0755',
  '0o755',
  '0O17',
  '0x1F',
  '-0x1f',
  '0b101',
  '-0b101',
  '08',
  '09.5',
  '1_000',
  '_1',
  '1e3',
  '1E-2',
  '+1.5e+3',
  '.5',
  '-.5',
  '1.',
  '6.8523015e+5',
  '685_230.15',
  '1:20',
  '190:20:30',
  '9223372036854775807',
  '-9223372036854775808',
  '9007199254740993',
  '1e400',
  '0x_1F',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '2001-12-14T21:59:43.10Z',
  '2001-12-14 21:59:43.10',
  '2001-2-3',
  '2001-02-30',
  '2001-12-14T21:59:43+00:00',
  '2024-02-29',
  '2023-02-29',
  '2001-12-14T21:59:43.123456789123Z',
  '.nan_',
  '.Inf_',

  '+',
  '.',

  '=',

  '12:30',
  '1,000',
  '0.1.2',
  '--1',
];

describe('e2e: staticsite validate reads YAML scalars as kubectl does', function () {
  this.timeout(120_000);

  it(`${SCALARS.length} plain scalars: the same JSON values as kubectl create --dry-run=client -o json`, async () => {
    const { controlPlane: cp } = await testCluster();
    const yaml = SCALARS.map(
      (s, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\ndata:\n  v: ${s}\n`,
    ).join('---\n');
    const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], yaml);
    expect(kubectl.code, kubectl.stderr).to.equal(0);
    // One pretty-printed object per document, each opening at the start of a line.
    const theirs = kubectl.stdout
      .split(/\n(?=\{)/)
      .map((text) => (JSON.parse(text) as { data: { v?: unknown } }).data.v);
    const ours: unknown[] = [];
    for await (const document of documentsOf([yaml])) {
      expect(document, JSON.stringify(document)).to.have.property('object');
      ours.push((document as { object: { data: { v: unknown } } }).object.data.v);
    }
    const rows = SCALARS.map((s, i) => ({ scalar: s, kubectl: theirs[i], ours: ours[i] }));
    expect(rows.filter((r) => JSON.stringify(r.kubectl) !== JSON.stringify(r.ours))).to.deep.equal([]);
  });

  for (const scalar of ['.inf', '-.Inf', '.NaN']) {
    it(`${scalar}: refused, as kubectl refuses it`, async () => {
      const { controlPlane: cp } = await testCluster();
      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: ${scalar}\n`;
      const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], yaml);
      expect(kubectl.code).to.not.equal(0);
      const ours = [];
      for await (const document of documentsOf([yaml])) ours.push(document);
      expect(ours).to.have.length(1);
      const error = (ours[0] as { error?: string }).error ?? '';
      expect(error).to.match(/^json: unsupported value: /);
      expect(kubectl.stderr).to.include(error);
    });
  }
});
