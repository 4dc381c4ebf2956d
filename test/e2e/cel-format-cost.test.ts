/**
 * The estimated cost of rules that use the Kubernetes format library, against kube-apiserver creating the CRD
 * (dry run): the same verdict and the same message, estimated cost factors included. The sizes of the generated
 * cases sit either side of where our estimate crosses a budget (test/fixtures/cel/format-cost-cases.ts); the
 * answers expected are the server's. Then the built CLI validates objects of such a CRD as the server admits them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { CustomResourceDefinition, JSONSchemaProps } from '../../crd/apiextensions.ts';
import { aggregateMessage, compileRules } from '../../crd/cel/index.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { FORMAT_COST_TEMPLATES, firstRefusedSize } from '../fixtures/cel/format-cost-cases.ts';
import { runBuiltCli } from '../support/built-cli.ts';
import { testCluster } from '../support/shared.ts';
import { singleVersionCrd } from '../support/single-version-crd.ts';

const GROUP = 'format-cost.staticsite.test';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const BASE = 'spec.validation.openAPIV3Schema';
/** Far past every boundary below, under the sizes the API server's request limit allows for. */
const LARGEST_SIZE = 2_000_000;

function rootSchema(x: JSONSchemaProps): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: { type: 'object', properties: { x } },
    },
  };
}

function ourAnswer(schema: JSONSchemaProps, crdName: string): string {
  const { errors } = compileRules(schema, { basePath: BASE });
  if (errors.length === 0) return 'created';
  return `CustomResourceDefinition.apiextensions.k8s.io "${crdName}" is invalid: ${aggregateMessage(errors)}`;
}

async function serverAnswer(client: KubeHttp, crd: CustomResourceDefinition): Promise<string> {
  const res = await client.post(CRDS, crd, { query: { dryRun: 'All' } });
  if (res.status === 201) return 'created';
  return (res.body as { message?: string } | undefined)?.message ?? `${res.status}: ${res.text}`;
}

/** Rules on a string of maxLength 63 (`self`) that our estimate once refused and the server accepts, and neighbours. */
const HAND_RULES: ReadonlyArray<{ rule: string; messageExpression?: string }> = [
  { rule: "format.dns1123Label().validate(self).orValue([''])[0] + 'x' == 'x'" },
  { rule: "format.dns1123Label().validate(self).value()[0] + 'x' == 'x'" },
  { rule: "format.dns1123Label().validate(self).value()[0].matches('^[a-z]+$')" },
  {
    rule: "'x' + format.dns1123Label().validate(self).value()[0] + format.named('labelValue').value().validate(self).value()[1] == self",
  },
  {
    rule: '!format.dns1123Label().validate(self).hasValue()',
    messageExpression: "'bad: ' + format.dns1123Label().validate(self).value()[0]",
  },
  {
    rule: '!format.dns1123Label().validate(self).hasValue()',
    messageExpression: "'bad: ' + format.dns1123Label().validate(self).orValue(['ok'])[0] + ' in ' + self",
  },
  { rule: "format.named(self).orValue(format.uri()).validate(self).orValue(['x'])[0].size() > 2" },
  { rule: 'size(format.dns1123Label().validate(self).orValue([])) == 0' },
  { rule: "format.named('dns1123Label') == optional.of(format.dns1123Label())" },
  { rule: 'format.dns1123Label().validate(self) == optional.none()' },
  { rule: "format.dns1123Label().validate(self).value().join(', ') == ''" },
  { rule: 'format.dns1123Label().validate(self).orValue([]).all(e, e.size() < 10)' },
  { rule: 'format.dns1123Label() == format.dns1123Subdomain()' },
];

describe('e2e: the estimated cost of format library rules is the API server estimate', function () {
  this.timeout(300_000);
  let client: KubeHttp;

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
  });

  it(`${FORMAT_COST_TEMPLATES.length} templates, sized either side of the budgets: the server's verdict and message`, async () => {
    const rows: Array<{ id: string; size: number; server: string; ours: string }> = [];
    for (const [t, template] of FORMAT_COST_TEMPLATES.entries()) {
      const name = (size: number) => `f${t}x${size}s.${GROUP}`;
      const refused = (size: number) => ourAnswer(rootSchema(template.schema(size)), name(size)) !== 'created';
      const boundary = firstRefusedSize(refused, LARGEST_SIZE);
      // A template our estimate never refuses must be one the server never refuses either.
      const sizes = boundary === undefined ? [LARGEST_SIZE] : [boundary - 1, boundary, boundary + 1, boundary * 2];
      for (const size of sizes.filter((s) => s >= 1)) {
        const plural = `f${t}x${size}s`;
        const schema = rootSchema(template.schema(size));
        const crd = singleVersionCrd(GROUP, `F${t}x${size}`, plural, schema);
        rows.push({
          id: template.id,
          size,
          server: await serverAnswer(client, crd),
          ours: ourAnswer(schema, name(size)),
        });
      }
    }
    expect(rows.filter((r) => r.server !== r.ours)).to.deep.equal([]);
    // The boundaries are real: each template was accepted once and refused once.
    for (const template of FORMAT_COST_TEMPLATES) {
      const answers = rows.filter((r) => r.id === template.id).map((r) => r.server === 'created');
      expect(answers, template.id).to.include(true).and.to.include(false);
    }
  });

  it(`${HAND_RULES.length} rules that index, join, concatenate and compare validate()'s results`, async () => {
    const rows: Array<{ rule: string; server: string; ours: string }> = [];
    for (const [i, rule] of HAND_RULES.entries()) {
      const plural = `h${i}s`;
      const schema = rootSchema({ type: 'string', maxLength: 63, 'x-kubernetes-validations': [rule] });
      const crd = singleVersionCrd(GROUP, `H${i}`, plural, schema);
      rows.push({
        rule: rule.rule,
        server: await serverAnswer(client, crd),
        ours: ourAnswer(schema, `${plural}.${GROUP}`),
      });
    }
    expect(rows.filter((r) => r.server !== r.ours)).to.deep.equal([]);
  });

  it('the built CLI validates objects of a CRD with such rules as the server admits them', async () => {
    const names: JSONSchemaProps = {
      type: 'array',
      maxItems: 20,
      items: { type: 'string', maxLength: 63 },
      'x-kubernetes-validations': [
        {
          rule: 'self.all(x, !format.dns1123Label().validate(x).hasValue())',
          messageExpression:
            "'not a DNS label: ' + self.filter(x, format.dns1123Label().validate(x).hasValue())[0] + ': ' + " +
            'format.dns1123Label().validate(self.filter(x, format.dns1123Label().validate(x).hasValue())[0]).value()[0]',
        },
      ],
    };
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { names } } },
    };
    const crd = singleVersionCrd(GROUP, 'Host', 'hosts', schema);
    const dir = await mkdtemp(join(tmpdir(), 'format-cost-'));
    await installCrd(client, crd);
    try {
      const objects = `/apis/${GROUP}/v1/namespaces/default/hosts`;
      const host = (name: string, labels: string[]) => ({
        apiVersion: `${GROUP}/v1`,
        kind: 'Host',
        metadata: { name, namespace: 'default' },
        spec: { names: labels },
      });
      const good = host('good', ['web', 'api-1']);
      const bad = host('bad', ['web', 'Not_A_Label']);
      await eventually(
        'the CRD served',
        async () => (await client.post(objects, good, { query: { dryRun: 'All' } })).status === 201,
      );
      const refused = await client.post(objects, bad, { query: { dryRun: 'All' } });
      expect(refused.status, refused.text).to.equal(422);
      const serverMessage = (refused.body as { message: string }).message;

      const crdFile = join(dir, 'crd.json');
      await writeFile(crdFile, JSON.stringify(crd));
      const goodFile = join(dir, 'good.json');
      const badFile = join(dir, 'bad.json');
      await writeFile(goodFile, JSON.stringify(good));
      await writeFile(badFile, JSON.stringify(bad));
      const cli = await runBuiltCli(['validate', '--crd', crdFile, '-o', 'json', goodFile, badFile]);
      expect(cli.stderr).to.equal('');
      const results = cli.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { status: string; message?: string });
      expect(results.map((r) => r.status)).to.deep.equal(['valid', 'invalid']);
      expect(results[1]?.message).to.equal(serverMessage);
      expect(cli.code).to.equal(1);
    } finally {
      await uninstallCrd(client, crd.metadata.name);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
