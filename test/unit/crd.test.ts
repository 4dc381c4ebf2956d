import { expect } from 'chai';
import { buildCrd, CRD_NAME, FINALIZER, versionSchema } from '../../api/index.ts';
import { generateCommand } from '../../cli/generate-command.ts';

describe('api: the StaticSite CRD', () => {
  it('serves v1alpha1 and v1, stores v1, and converts through the webhook Service at /convert', () => {
    const crd = buildCrd();
    expect(crd.metadata.name).to.equal(CRD_NAME);
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).to.deep.equal([
      ['v1alpha1', true, false],
      ['v1', true, true],
    ]);
    expect(crd.spec.conversion).to.deep.equal({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: {
          service: { namespace: 'staticsite-system', name: 'staticsite-webhook', path: '/convert', port: 443 },
        },
      },
    });
    expect(crd.spec.names.shortNames).to.deep.equal(['site']);
    expect(FINALIZER).to.equal('staticsite.dev/external-record');
  });

  it('has status and scale subresources and the printer columns on every version', () => {
    for (const version of buildCrd().spec.versions) {
      expect(version.subresources?.status).to.deep.equal({});
      expect(version.subresources?.scale?.specReplicasPath).to.equal('.spec.replicas');
      expect(version.additionalPrinterColumns?.map((c) => c.name)).to.deep.equal([
        'Replicas',
        'Ready',
        'Status',
        'Reason',
        'Progressing',
        'Degraded',
        'Age',
      ]);
    }
  });

  it('schema-only variant: v1 only, no conversion webhook, no reference to any webhook', () => {
    const crd = buildCrd({ schemaOnly: true });
    expect(crd.spec.versions.map((v) => v.name)).to.deep.equal(['v1']);
    expect(crd.spec.conversion).to.deep.equal({ strategy: 'None' });
    const text = JSON.stringify(crd);
    for (const word of ['"Webhook"', '"webhook"', 'clientConfig', 'caBundle', '/convert', 'staticsite-webhook']) {
      expect(text).not.to.include(word);
    }
    expect(versionSchema(crd, 'v1')).to.deep.equal(versionSchema(buildCrd(), 'v1'));
  });

  it('accepts a URL client config for a local control plane', () => {
    const crd = buildCrd({ conversionClientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' } });
    expect(crd.spec.conversion?.webhook?.clientConfig).to.deep.equal({
      url: 'https://127.0.0.1:9443/convert',
      caBundle: 'Q0E=',
    });
  });

  it('the committed manifests/generated files equal what api/ generates', async () => {
    const errors: string[] = [];
    const code = await generateCommand(['manifests', '--check'], {
      stdout: () => {},
      stderr: (t) => errors.push(t),
    });
    expect(errors).to.deep.equal([]);
    expect(code).to.equal(0);
  });
});
