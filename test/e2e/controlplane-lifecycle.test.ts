import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ControlPlane, controlPlaneBinDir } from '../../devenv/controlplane.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('e2e: control-plane harness lifecycle', function () {
  this.timeout(120_000);

  it('stop() leaves no process and no temp dir behind', async () => {
    const cp = await new ControlPlane({ binDir: await controlPlaneBinDir() }).start();
    const { pids, dir } = cp;
    expect(pids).to.have.length(3);
    expect(pids.every(alive)).to.equal(true);
    expect((await cp.admin.get('/readyz')).status).to.equal(200);
    await cp.stop();
    expect(pids.filter(alive)).to.deep.equal([]);
    expect(existsSync(dir)).to.equal(false);
  });

  it('a failed start reports the process log and still cleans up', async () => {
    const fakeBin = await mkdtemp(join(tmpdir(), 'staticsite-fakebin-'));
    try {
      const real = await controlPlaneBinDir();
      await writeFile(join(fakeBin, 'etcd'), `#!/bin/sh\nexec ${real}/etcd "$@"\n`, { mode: 0o755 });
      await writeFile(join(fakeBin, 'kube-apiserver'), '#!/bin/sh\necho "apiserver: simulated crash" >&2\nexit 3\n', {
        mode: 0o755,
      });
      const cp = new ControlPlane({ binDir: fakeBin });
      let error: Error | undefined;
      await cp.start().catch((e: Error) => {
        error = e;
      });
      expect(error?.message).to.include('kube-apiserver exited');
      expect(error?.message).to.include('apiserver: simulated crash');
      expect(cp.pids.filter(alive)).to.deep.equal([]);
      expect(existsSync(cp.dir)).to.equal(false);
    } finally {
      await rm(fakeBin, { recursive: true, force: true });
    }
  });
});
