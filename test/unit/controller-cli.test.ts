import { expect } from 'chai';
import { run } from '../../cli/main.ts';

function io() {
  const out = { stdout: '', stderr: '' };
  const cio = {
    stdout: (t: string) => {
      out.stdout += t;
    },
    stderr: (t: string) => {
      out.stderr += t;
    },
  };
  return { out, io: cio };
}

describe('controller: CLI', () => {
  it('is listed in the usage', async () => {
    const { out, io: cio } = io();
    expect(await run(['--help'], cio)).to.equal(0);
    expect(out.stdout).to.match(/^ {2}controller +run the StaticSite controller$/m);
  });

  it('takes --log-level as one of the level words, and refuses anything else before touching any cluster', async () => {
    for (const command of ['controller', 'webhook', 'certs']) {
      const { out, io: cio } = io();
      const args =
        command === 'webhook'
          ? ['--cert-dir', '/nowhere']
          : command === 'certs'
            ? ['bootstrap', '--service', 's', '--namespace', 'n', '--out-dir', '/nowhere']
            : [];
      expect(await run([command, ...args, '--log-level', 'loud'], cio), command).to.equal(2);
      expect(out.stderr.split('\n')[0], command).to.equal(
        `staticsite ${command}: --log-level must be one of trace, debug, info, warn, error, fatal, silent, not "loud"`,
      );
    }
  });

  it('rejects a bad flag value with exit code 2 and the usage line, before touching any cluster', async () => {
    const { out, io: cio } = io();
    expect(await run(['controller', '--workers', 'many'], cio)).to.equal(2);
    expect(out.stderr).to.equal(
      'staticsite controller: --workers must be a whole number of at least 1, got "many"\n' +
        'usage: staticsite controller [--kubeconfig F] [--namespace NS] [--exclude-namespaces NS,...] [--claims-namespace NS] [--create-claims-namespace] [--records dir:DIR|dns:HOST:PORT] [--dns-zone Z] [--dns-tsig-key-file F] [--dns-owner-id ID] [--records-dir DIR] [--workers N] [--leader-elect] [--metrics-port 8081] [--metrics-bind-address HOST:PORT] [--health-probe-bind-address HOST:PORT] [--metrics-secure true|false] [--log-level info] [--site-image IMAGE] [--site-port 8080] [--gateway NAMESPACE/NAME] [--ingress-class NAME] [--sharded]\n',
    );
  });

  it('exposes sites one way: --gateway and --ingress-class together, or a class that is no name, are usage errors', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--gateway', 'infra/public', '--ingress-class', 'public'],
        '--gateway and --ingress-class exclude each other: a site is exposed through one of them',
      ],
      [
        ['--ingress-class', 'Public_1'],
        '--ingress-class: "Public_1" is not an IngressClass name (a DNS-1123 subdomain)',
      ],
    ];
    for (const [args, message] of cases) {
      const { out, io: cio } = io();
      expect(await run(['controller', ...args], cio), args.join(' ')).to.equal(2);
      expect(out.stderr.split('\n')[0]).to.equal(`staticsite controller: ${message}`);
    }
  });

  it('rejects an unknown flag with exit code 2', async () => {
    const { out, io: cio } = io();
    expect(await run(['controller', '--no-such-flag'], cio)).to.equal(2);
    expect(out.stderr).to.include("Unknown option '--no-such-flag'");
  });

  it('takes the site image as --site-image only, and a site port from 1 to 65535', async () => {
    const image = io();
    expect(await run(['controller', '--image', 'a'], image.io)).to.equal(2);
    expect(image.out.stderr).to.include("staticsite controller: Unknown option '--image'");
    const port = io();
    expect(await run(['controller', '--site-port', '0'], port.io)).to.equal(2);
    expect(port.out.stderr).to.include(
      'staticsite controller: --site-port must be a whole number from 1 to 65535, got "0"\n',
    );
  });

  it('reads every duration flag as Go does, and 0 workers is a usage error', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--resync-period', '10'],
        '--resync-period must be a duration such as 90s, 10m or 1h30m (units ns, us, ms, s, m, h): "10" has a number without a unit',
      ],
      [
        ['--shutdown-grace', '1d'],
        '--shutdown-grace must be a duration such as 90s, 10m or 1h30m (units ns, us, ms, s, m, h): unknown unit "d" in "1d"',
      ],
      [['--leader-elect-retry-period=-2s'], '--leader-elect-retry-period must be at least 0s, got "-2s"'],
      [['--workers', '0'], '--workers must be a whole number of at least 1, got "0"'],
      [['--kube-api-qps', '1e3'], '--kube-api-qps must be a whole number of at least 0, got "1e3"'],
    ];
    for (const [args, message] of cases) {
      const { out, io: cio } = io();
      expect(await run(['controller', ...args], cio), args.join(' ')).to.equal(2);
      expect(out.stderr.split('\n')[0]).to.equal(`staticsite controller: ${message}`);
    }
  });

  it('--records names dir:DIR or dns:HOST:PORT, and dns needs its zone and key file: exit 2 naming what is missing', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--records', 'dns.example:53'],
        '--records dns.example:53: expected dir:DIR or dns:HOST:PORT (for example dns:10.0.0.53:53)',
      ],
      [['--records', 'dns:127.0.0.1:0'], '--records dns:127.0.0.1:0: the port must be 1-65535'],
      [['--records', 'dns:127.0.0.1:53'], '--records dns:… needs --dns-zone (the zone the records go in)'],
      [
        ['--records', 'dns:[::1]:53', '--dns-zone', 'sites.example'],
        '--records dns:… needs --dns-tsig-key-file (a BIND key file, as tsig-keygen writes)',
      ],
    ];
    for (const [args, message] of cases) {
      const { out, io: cio } = io();
      expect(await run(['controller', ...args], cio), args.join(' ')).to.equal(2);
      expect(out.stderr.split('\n')[0]).to.equal(`staticsite controller: ${message}`);
    }
  });
});
