import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { CustomResourceDefinition, JSONSchemaProps } from '../../api/index.ts';
import { admit, CrdVersionError, compileCrdVersion } from '../../crd/index.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { testCluster } from '../support/shared.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'regexp.parity.test';
const refused = (
  JSON.parse(readFileSync(new URL('../fixtures/regexp/go-results.json', import.meta.url), 'utf8')) as Array<{
    pattern: string;
    error?: string;
  }>
).filter((r) => r.error !== undefined);

function crdWith(spec: JSONSchemaProps): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `patterns.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'Pattern', listKind: 'PatternList', plural: 'patterns', singular: 'pattern' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: spec } } },
        },
      ],
    },
  };
}

describe('engine: Go regexps against kube-apiserver (CRD patterns and CEL matches)', function () {
  this.timeout(120_000);
  let client: KubeHttp;

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
  });

  it('a CRD whose pattern Go refuses: the same 422 from the API server and from compileCrdVersion', async () => {
    for (const { pattern } of refused) {
      const crd = crdWith({ type: 'object', properties: { x: { type: 'string', pattern } } });
      const res = await client.post<{ code: number; message: string }>(CRDS, crd, { query: { dryRun: 'All' } });
      expect(res.body.code, pattern).to.equal(422);
      let ours = '';
      try {
        compileCrdVersion(crd);
      } catch (error) {
        expect(error).to.be.instanceOf(CrdVersionError);
        ours = (error as Error).message;
      }
      expect(ours, pattern).to.equal(res.body.message);
    }
  });

  describe('catastrophic patterns: the same verdict as the API server, in linear time', () => {
    const crd = crdWith({
      type: 'object',
      properties: { x: { type: 'string', pattern: '^(a+)+$' }, y: { type: 'string' } },
      'x-kubernetes-validations': [{ rule: "!has(self.y) || self.y.matches('^(a|a)*$')", message: 'y is not a*' }],
    });
    const v1 = compileCrdVersion(crd);
    const path = `/apis/${GROUP}/v1/namespaces/default/patterns`;
    const object = (spec: Record<string, string>) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'Pattern',
      metadata: { name: 'p', namespace: 'default' },
      spec,
    });

    before(async () => {
      await installCrd(client, crd);
    });
    after(async () => {
      await uninstallCrd(client, crd.metadata.name);
    });

    const specs: Array<Record<string, string>> = [
      { x: `${'a'.repeat(64)}!` },
      { y: `${'a'.repeat(64)}!` },
      { x: 'aaa', y: 'aaaa' },
    ];
    for (const spec of specs) {
      it(`${JSON.stringify(spec).slice(0, 40)}...`, async () => {
        const res = await client.post<{ code?: number; message?: string }>(path, object(spec), {
          query: { dryRun: 'All' },
        });
        const started = performance.now();
        const result = admit(v1, object(spec), { namespace: 'default' });
        const elapsed = performance.now() - started;
        if (res.status === 201) expect(result.allowed).to.equal(true);
        else
          expect({ code: result.code, message: result.message }).to.deep.equal({
            code: res.body.code,
            message: res.body.message,
          });
        expect(elapsed).to.be.below(50);
      });
    }
  });
});
