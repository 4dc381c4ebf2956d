/**
 * `staticsite validate` as a user runs it in CI, the built CLI as a process, with a real project's
 * CRD folder: Gateway API v1.6.3's config/crd/standard holds an admission policy beside its CRDs
 * (skipped with a note), and HTTPRoute's rules use has() on indexed fields. The verdicts the
 * examples must get are the API server's (test/e2e/real-crds.test.ts compares the same examples with
 * the server); here the CLI must give them from its entry point.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { thirdPartyModuleDir } from '../../devenv/third-party-crds.ts';
import { runBuiltCli } from '../support/built-cli.ts';

describe('e2e: staticsite validate with a real project CRD folder (Gateway API), the built CLI', function () {
  this.timeout(600_000); // the first run downloads the module

  it('skips the non-CRD file with a note and admits the published HTTPRoute and GRPCRoute examples', async () => {
    const dir = await thirdPartyModuleDir('gateway-api');
    const crds = join(dir, 'config', 'crd', 'standard');
    const examples = join(dir, 'examples', 'standard');
    const r = await runBuiltCli([
      'validate',
      '--crd',
      crds,
      '-o',
      'json',
      join(examples, 'simple-gateway', 'httproute.yaml'),
      join(examples, 'traffic-splitting', 'grpc-traffic-split-2.yaml'),
    ]);
    expect(r.stderr).to.equal(
      `staticsite validate: note: ${join(crds, 'gateway.networking.k8s.io_vap_safeupgrades.yaml')}: no CustomResourceDefinition, skipped\n`,
    );
    const results = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { status: string; object: { kind: string } | null });
    expect(results.map((x) => [x.status, x.object?.kind])).to.deep.equal([
      ['valid', 'HTTPRoute'],
      ['valid', 'GRPCRoute'],
    ]);
    expect(r.code).to.equal(0);
  });
});
