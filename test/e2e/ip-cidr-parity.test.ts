/**
 * The IP and CIDR libraries on generated strings, against kube-apiserver: every string goes to the
 * API server (server-side dry run) and to admit() as one item of a list whose item rules are
 * `isIP(self)` / `isCIDR(self)` and a parse (`ip(self)`, `cidr(self)`), so the verdicts and the
 * parse errors (Go's net/netip texts and the library's own) must agree item by item. The strings are
 * built from a seed: IPv4 and IPv6 forms near and past every rule (field counts and values,
 * leading zeros, compression, embedded IPv4, zones, IPv4-mapped, prefix lengths, stray characters).
 */
import { expect } from 'chai';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { admit, compileCrdVersion } from '../../crd/index.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { random } from '../../devenv/fuzz/mutations.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { compareCreateAt } from '../fixtures/schema/parity-compare.ts';
import { testCluster } from '../support/shared.ts';
import { singleVersionCrd } from '../support/single-version-crd.ts';

const SEED = 20261203;
const PER_KIND = 384;
const ITEMS_PER_REQUEST = 64;
const GROUP = 'netip.parity.test';

function generator(seed: number) {
  const rand = random(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  // Mostly valid parts, so that valid addresses are common and each damage stands alone.
  const octet = () =>
    rand() < 0.85
      ? String(int(256))
      : pick([
          () => String(250 + int(10)),
          () => `0${int(100)}`,
          () => '',
          () => `0x${int(256).toString(16)}`,
          () => String(1000 + int(9000)),
        ])();
  const ipv4 = () => {
    const count = rand() < 0.9 ? 4 : pick([3, 5]);
    return Array.from({ length: count }, octet).join(rand() < 0.95 ? '.' : pick(['..', ':']));
  };
  const group = () =>
    rand() < 0.9
      ? int(0x10000).toString(16)
      : pick([
          () => int(0x10000).toString(16).toUpperCase(),
          () => '0',
          () => int(0x100000).toString(16).padStart(5, '0'),
          () => 'g',
        ])();
  const ipv6 = () => {
    const compressed = rand() < 0.6;
    const count = rand() < 0.8 ? (compressed ? 1 + int(6) : 8) : 1 + int(9);
    const groups = Array.from({ length: count }, group);
    if (compressed) groups.splice(int(groups.length + 1), 0, '');
    if (rand() < 0.1) groups.splice(int(groups.length + 1), 0, '');
    let text = groups.join(':');
    if (text.startsWith(':') && !text.startsWith('::')) text = `:${text}`;
    if (text.endsWith(':') && !text.endsWith('::')) text = `${text}:`;
    if (rand() < 0.2) text = `${text}:${ipv4()}`;
    return text;
  };
  const address = () =>
    pick([
      ipv4,
      ipv4,
      ipv6,
      ipv6,
      () => `::ffff:${ipv4()}`,
      () => `${pick([ipv4, ipv6])()}%${pick(['eth0', '', '1'])}`,
      () => `[${ipv6()}]`,
      () => pick(['::', '::1', '0.0.0.0', '255.255.255.255', '1::', '::1.2.3.4']),
    ])();
  const damaged = (s: string) =>
    rand() < 0.1 ? pick([` ${s}`, `${s} `, `${s}\t`, `${s}é`, s.replace('.', '。'), s.slice(0, -1)]) : s;
  return {
    ip: () => damaged(address()),
    cidr: () => {
      const addr = address();
      const bits = addr.includes(':') ? int(129) : int(33);
      return damaged(
        rand() < 0.7
          ? `${addr}/${bits}`
          : pick([
              () =>
                `${addr}/${pick([String(33 + int(100)), `0${int(10)}`, '', '-1', '+8', '999', '99999999999999999999'])}`,
              () => `${addr}/${int(33)}/${int(33)}`,
              () => addr,
            ])(),
      );
    },
  };
}

const RULES = {
  ip: [{ rule: 'isIP(self)', message: 'not an IP' }, { rule: 'ip(self).family() > 0' }],
  cidr: [{ rule: 'isCIDR(self)', message: 'not a CIDR' }, { rule: 'cidr(self).prefixLength() >= 0' }],
} as const;

function crdFor(kind: 'ip' | 'cidr'): CustomResourceDefinition {
  const items = { type: 'string', maxLength: 64, 'x-kubernetes-validations': [...RULES[kind]] } as const;
  return singleVersionCrd(GROUP, kind === 'ip' ? 'IpList' : 'CidrList', `${kind}lists`, {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { values: { type: 'array', maxItems: ITEMS_PER_REQUEST, items: items as never } },
      },
    },
  });
}

describe('e2e: the IP and CIDR libraries on generated strings, against kube-apiserver', function () {
  this.timeout(300_000);
  let client: KubeHttp;
  const crds = { ip: crdFor('ip'), cidr: crdFor('cidr') };

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
    for (const crd of Object.values(crds)) await installCrd(client, crd);
  });

  after(async () => {
    for (const crd of Object.values(crds)) await uninstallCrd(client, crd.metadata.name);
  });

  for (const kind of ['ip', 'cidr'] as const) {
    it(`${PER_KIND} strings through ${kind}() from seed ${SEED}: the same verdicts and parse errors`, async () => {
      const next = generator(SEED)[kind];
      const values = [...new Set(Array.from({ length: PER_KIND * 2 }, next))]
        .filter((v) => v.length <= 64)
        .slice(0, PER_KIND);
      const crd = crds[kind];
      const compiled = compileCrdVersion(crd, 'v1');
      const differences: string[] = [];
      let invalid = 0;
      for (let i = 0; i < values.length; i += ITEMS_PER_REQUEST) {
        const batch = values.slice(i, i + ITEMS_PER_REQUEST);
        const object = {
          apiVersion: `${GROUP}/v1`,
          kind: crd.spec.names.kind,
          metadata: { name: `batch-${i}`, namespace: 'default' },
          spec: { values: batch },
        };
        const comparison = await compareCreateAt(
          client,
          `/apis/${GROUP}/v1/namespaces/default/${crd.spec.names.plural}`,
          compiled,
          object,
          { fieldValidation: 'Strict', namespace: 'default' },
        );
        if (comparison.verdict === 'different') differences.push(...comparison.differences);
        const result = admit(compiled, object, { fieldValidation: 'Strict', namespace: 'default' });
        invalid += new Set(result.errors.map((e) => e.field)).size;
      }
      expect(differences).to.deep.equal([]);
      // The generator reaches both sides of the rules.
      expect(values.length).to.be.greaterThan(PER_KIND / 2);
      expect(invalid).to.be.within(values.length / 10, (values.length * 9) / 10);
      process.stdout.write(`      ${values.length} strings, ${invalid} refused\n`);
    });
  }
});
