import { stopTestCluster } from './shared.ts';

/** Mocha root hooks: the shared control plane stops once, after every suite has run. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopTestCluster();
  },
};
