/**
 * The engine on real CRDs: Gateway API v1.6.3's standard and experimental channels (from the Go
 * module proxy), one after the other (their CRDs share names). Every
 * CRD the API server accepts compiles in the engine, for every served version; every published
 * example is sent to the API server (server-side dry run, Strict) and to admit() at every served
 * version of its CRD, and verdict, code, message, every error, every warning (a deprecated
 * version's included) and the resulting object must agree. The expected answers are the server's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { compileCrdVersion } from '../../crd/index.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { thirdPartyModuleDir } from '../../devenv/third-party-crds.ts';
import { compareCreateAt } from '../fixtures/schema/parity-compare.ts';
import { testCluster } from '../support/shared.ts';

const NAMESPACE = 'default';

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFilesUnder(path);
      return name.endsWith('.yaml') ? [path] : [];
    });
}

function documentsOf(file: string): Array<Record<string, unknown>> {
  return loadAll(readFileSync(file, 'utf8')).filter(
    (d): d is Record<string, unknown> => d !== null && typeof d === 'object',
  );
}

for (const channel of ['standard', 'experimental'] as const) {
  describe(`e2e: real CRDs (Gateway API ${channel} channel) against kube-apiserver`, function () {
    this.timeout(300_000);
    let client: KubeHttp;
    const crds: CustomResourceDefinition[] = [];
    // The experimental CRDs are a superset: the standard examples go to them too.
    const examplesDirs: string[] = [];

    before(async function () {
      this.timeout(600_000); // the first run downloads the module (about 10 MB)
      client = (await testCluster()).controlPlane.admin;
      const moduleDir = await thirdPartyModuleDir('gateway-api');
      for (const file of yamlFilesUnder(join(moduleDir, 'config', 'crd', channel))) {
        for (const doc of documentsOf(file)) if (doc.kind === 'CustomResourceDefinition') crds.push(doc as never);
      }
      // The API server accepts every one: installCrd waits until each is Established and served.
      for (const crd of crds) await installCrd(client, crd);
      for (const c of channel === 'standard' ? ['standard'] : ['standard', 'experimental'])
        examplesDirs.push(join(moduleDir, 'examples', c));
    });

    after(async () => {
      for (const crd of crds) await uninstallCrd(client, crd.metadata.name);
    });

    it('every CRD the API server accepted compiles in the engine, every served version', () => {
      expect(crds.map((c) => c.spec.names.kind)).to.include.members(['GRPCRoute', 'Gateway', 'HTTPRoute']);
      const refused: string[] = [];
      for (const crd of crds) {
        for (const v of crd.spec.versions.filter((x) => x.served)) {
          try {
            compileCrdVersion(crd, v.name);
          } catch (error) {
            refused.push(`${crd.metadata.name}/${v.name}: ${(error as Error).message}`);
          }
        }
      }
      expect(refused).to.deep.equal([]);
    });

    it('every published example, at every served version of its CRD: the same answer as the API server', async () => {
      const differences: string[] = [];
      const kinds = new Map<string, number>();
      let compared = 0;
      for (const file of examplesDirs.flatMap(yamlFilesUnder)) {
        for (const doc of documentsOf(file)) {
          const [group] = String(doc.apiVersion).split('/');
          const crd = crds.find((c) => c.spec.group === group && c.spec.names.kind === doc.kind);
          if (!crd) continue;
          const namespaced = crd.spec.scope !== 'Cluster';
          for (const v of crd.spec.versions.filter((x) => x.served)) {
            const object = {
              ...doc,
              apiVersion: `${group}/${v.name}`,
              metadata: { ...(doc.metadata as object), ...(namespaced && { namespace: NAMESPACE }) },
            };
            const path = namespaced
              ? `/apis/${group}/${v.name}/namespaces/${NAMESPACE}/${crd.spec.names.plural}`
              : `/apis/${group}/${v.name}/${crd.spec.names.plural}`;
            const compiled = compileCrdVersion(crd, v.name);
            const comparison = await compareCreateAt(client, path, compiled, object, {
              fieldValidation: 'Strict',
              namespace: namespaced ? NAMESPACE : undefined,
            });
            compared++;
            kinds.set(String(doc.kind), (kinds.get(String(doc.kind)) ?? 0) + 1);
            if (comparison.verdict === 'different') {
              differences.push(
                `${file.slice(file.indexOf('examples/'))} ${v.name}: ${comparison.differences.join('; ')}`,
              );
            }
          }
        }
      }
      process.stdout.write(`      ${compared} requests: ${JSON.stringify(Object.fromEntries(kinds))}\n`);
      expect(differences).to.deep.equal([]);
      expect(kinds.get('HTTPRoute') ?? 0).to.be.greaterThan(20);
      expect(kinds.get('GRPCRoute') ?? 0).to.be.greaterThan(0);
    });
  });
}
