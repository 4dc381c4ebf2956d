import { guardTestRun } from './run-guard.ts';
import { stopTestCluster } from './shared.ts';

// Before any suite starts a process: every one of them ends with the run, however the run ends.
guardTestRun();

/** Mocha root hooks: the shared control plane stops once, after every suite has run. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopTestCluster();
  },
};
