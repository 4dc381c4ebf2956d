/**
 * The API server's deprecation warning for a CRD version. Expected values: the table of
 * Test_defaultDeprecationWarning in k8s.io/apiextensions-apiserver@v0.37.2
 * pkg/apiserver/customresource_handler_test.go, and through `staticsite validate` the warning kubectl
 * prints for a request to a deprecated version.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { buildCrd } from '../../api/index.ts';
import { run } from '../../cli/main.ts';
import type { CustomResourceDefinition } from '../../crd/apiextensions.ts';
import { defaultDeprecationWarning } from '../../crd/deprecation.ts';

type Spec = CustomResourceDefinition['spec'];
const widget = (versions: Array<{ name: string; served: boolean; deprecated?: boolean }>): Spec =>
  ({
    group: 'example.com',
    names: { kind: 'Widget' },
    versions: versions.map((v) => ({ storage: false, ...v })),
  }) as unknown as Spec;

describe('crd: the deprecation warning of a CRD version', () => {
  it('no replacement', () => {
    const spec = widget([
      { name: 'v1', served: true, deprecated: true },
      { name: 'v2', served: true, deprecated: true },
      { name: 'v3', served: false },
    ]);
    expect(defaultDeprecationWarning('v1', spec)).to.equal('example.com/v1 Widget is deprecated');
  });

  it('replacement sorting', () => {
    const served = [
      'v1',
      'v1alpha1',
      'v1alpha2',
      'v1beta1',
      'v1beta2',
      'v2',
      'v2alpha1',
      'v2alpha2',
      'v2beta1',
      'v2beta2',
    ];
    const unserved = ['v3', 'v3alpha1', 'v3alpha2', 'v3beta1', 'v3beta2'];
    const spec = widget([
      ...served.map((name) => ({ name, served: true })),
      ...unserved.map((name) => ({ name, served: false })),
    ]);
    expect(defaultDeprecationWarning('v1', spec)).to.equal(
      'example.com/v1 Widget is deprecated; use example.com/v2 Widget',
    );
  });

  it('no newer replacement of equal stability', () => {
    const spec = widget([
      { name: 'v1', served: true },
      { name: 'v3', served: false },
      { name: 'v3alpha1', served: true },
      { name: 'v3beta1', served: true },
      { name: 'v4', served: true, deprecated: true },
    ]);
    expect(defaultDeprecationWarning('v2', spec)).to.equal('example.com/v2 Widget is deprecated');
  });

  it('staticsite validate warns of an object sent to a deprecated version, before any other warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'deprecation-'));
    try {
      // The API server's default text: the shipped CRD's own deprecationWarning taken away.
      const crd = buildCrd();
      for (const v of crd.spec.versions) if (v.name === 'v1alpha1') delete v.deprecationWarning;
      await writeFile(join(dir, 'crd.yaml'), dump(crd));
      const site = {
        apiVersion: 'staticsite.dev/v1alpha1',
        kind: 'StaticSite',
        metadata: { name: 'old' },
        spec: { content: 'x', colour: 'red' },
      };
      await writeFile(join(dir, 'site.yaml'), dump(site));
      let stdout = '';
      const code = await run(
        ['validate', '--crd', join(dir, 'crd.yaml'), '--field-validation', 'Warn', join(dir, 'site.yaml')],
        {
          stdout: (t) => {
            stdout += t;
          },
          stderr: () => {},
        },
      );
      expect(code).to.equal(0);
      const warnings = stdout.split('\n').filter((line) => line.startsWith('Warning: '));
      expect(warnings[0]).to.equal(
        'Warning: staticsite.dev/v1alpha1 StaticSite is deprecated; use staticsite.dev/v1 StaticSite',
      );
      expect(warnings[1]).to.include('unknown field "spec.colour"');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
