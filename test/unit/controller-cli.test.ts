import { expect } from 'chai';
import { run } from '../../cli/main.ts';
import { parseDuration } from '../../controller/duration.ts';

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
      'staticsite controller: --workers must be a non-negative integer, got "many"\n' +
        'usage: staticsite controller [--kubeconfig F] [--namespace NS] [--exclude-namespaces NS,...] [--claims-namespace NS] [--create-claims-namespace] [--records dir:DIR|dns:HOST:PORT --dns-zone Z --dns-tsig-key-file F [--dns-owner-id ID]] [--records-dir DIR] [--workers N] [--leader-elect] [--metrics-port 8081] [--metrics-bind-address HOST:PORT] [--health-probe-bind-address HOST:PORT] [--metrics-secure true|false] [--site-image IMAGE] [--site-port 8080] [--log-level info]\n',
    );
  });

  it('rejects an unknown flag with exit code 2', async () => {
    const { out, io: cio } = io();
    expect(await run(['controller', '--no-such-flag'], cio)).to.equal(2);
    expect(out.stderr).to.include("Unknown option '--no-such-flag'");
  });

  it('rejects --image beside --site-image, and a site port outside 1-65535', async () => {
    const both = io();
    expect(await run(['controller', '--image', 'a', '--site-image', 'b'], both.io)).to.equal(2);
    expect(both.out.stderr).to.include(
      'staticsite controller: --image is the old spelling of --site-image: give one of them\n',
    );
    const port = io();
    expect(await run(['controller', '--site-port', '0'], port.io)).to.equal(2);
    expect(port.out.stderr).to.include('staticsite controller: --site-port must be a port (1-65535), got "0"\n');
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

  it('parses Go-style durations', () => {
    expect(parseDuration('500ms')).to.equal(500);
    expect(parseDuration('15s')).to.equal(15_000);
    expect(parseDuration('1m30s')).to.equal(90_000);
    expect(parseDuration('2')).to.equal(2_000);
    expect(() => parseDuration('soon')).to.throw('invalid duration "soon"');
  });
});
