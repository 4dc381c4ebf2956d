import { expect } from 'chai';
import { PARENT_PID_VARIABLE, watchParent } from '../../process/parent-watch.ts';

describe('watchParent: a process started by the dev environment ends with its parent', () => {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('calls onGone once, when the parent pid changes', async () => {
    let parent = 4242;
    let gone = 0;
    watchParent(
      { [PARENT_PID_VARIABLE]: '4242' },
      () => parent,
      () => gone++,
      5,
    );
    await wait(30);
    expect(gone).to.equal(0);
    parent = 1;
    await wait(30);
    parent = 7;
    await wait(30);
    expect(gone).to.equal(1);
  });

  it('watches nothing without the variable, or with a pid that is no parent', async () => {
    let gone = 0;
    for (const env of [{}, { [PARENT_PID_VARIABLE]: 'x' }, { [PARENT_PID_VARIABLE]: '1' }]) {
      watchParent(
        env,
        () => 99,
        () => gone++,
        5,
      );
    }
    await wait(30);
    expect(gone).to.equal(0);
  });
});
