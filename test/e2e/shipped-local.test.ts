import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { builtCli } from '../../devenv/webhook-process.ts';

const run = promisify(execFile);

describe('e2e: `staticsite local --exit-after-sample` (the built CLI as a process)', function () {
  this.timeout(600_000);

  it('starts the whole system from dist/, shows the sample site Ready with its record, and exits 0', async () => {
    const { stdout } = await run(process.execPath, [builtCli(), 'local', '--exit-after-sample'], {
      maxBuffer: 16 << 20,
    });
    expect(stdout).to.include('applied StaticSite demo/hello (2 replicas)');
    expect(stdout).to.include('admission: finalizer staticsite.dev/external-record, tier dev, hostname hello.demo.');
    expect(stdout).to.match(/status: Ready=True \(/);
    expect(stdout).to.match(/external record: .*hello/);
    expect(stdout).to.include('everything is running.');
  });

  it('--dns keeps the records in a local BIND 9 and shows the sample answering dig', async () => {
    const { stdout } = await run(process.execPath, [builtCli(), 'local', '--dns', '--exit-after-sample'], {
      maxBuffer: 16 << 20,
    });
    expect(stdout).to.match(/dns: BIND 9 on 127\.0\.0\.1:8053, zone sites\.staticsite\.dev/);
    expect(stdout).to.include(
      'external record: dig @127.0.0.1 -p 8053 hello.demo.sites.staticsite.dev CNAME -> hello.demo.svc.cluster.local.',
    );
    expect(stdout).to.include('  dig @127.0.0.1 -p 8053 hello.demo.sites.staticsite.dev');
  });
});
