import { expect } from 'chai';
import { MEMORY_RECLAIM, MemoryReclaimer } from '../../controller/memory-reclaim.ts';
import { memoryReducingGc } from '../../controller/memory-reducing-gc.ts';
import { ManualClock } from '../support/kube/manual-clock.ts';

describe('controller: memory given back once a burst of work is over', () => {
  const { periodMs, burst, quiet } = MEMORY_RECLAIM;
  const setup = () => {
    const clock = new ManualClock();
    let work = 0;
    const reclaims: number[] = [];
    const reclaimer = new MemoryReclaimer({
      clock,
      workDone: () => work,
      reclaim: () => undefined,
      reclaimed: (info) => reclaims.push(info.work),
    });
    reclaimer.start();
    return { clock, reclaimer, reclaims, add: (n: number) => (work += n) };
  };

  it('after a burst, once a whole period has been quiet: once', async () => {
    const { clock, reclaims, add, reclaimer } = setup();
    add(burst * 2);
    await clock.advance(periodMs); // the burst's period
    expect(reclaims).to.deep.equal([]);
    add(quiet); // a trickle is quiet
    await clock.advance(periodMs);
    expect(reclaims).to.deep.equal([burst * 2 + quiet]);
    add(quiet);
    await clock.advance(periodMs * 4);
    expect(reclaims, 'not again without a new burst').to.have.length(1);
    reclaimer.stop();
    expect(clock.pending()).to.equal(0);
  });

  it('never while the work goes on, nor for less than a burst', async () => {
    const { clock, reclaims, add, reclaimer } = setup();
    for (let i = 0; i < 10; i++) {
      add(quiet + 1);
      await clock.advance(periodMs);
    }
    expect(reclaims, 'busy').to.deep.equal([]);
    await clock.advance(periodMs);
    expect(reclaims, 'quiet after 10 x 51 items: a burst').to.deep.equal([10 * (quiet + 1)]);
    add(burst - 1);
    await clock.advance(periodMs * 3);
    expect(reclaims, 'less than a burst since').to.have.length(1);
    reclaimer.stop();
  });

  it("the collection is V8's memory-reducing one, fetched without --expose-gc on the command line", () => {
    const gc = memoryReducingGc();
    expect(gc).not.to.throw();
    expect((globalThis as { gc?: unknown }).gc, 'no global gc left behind').to.equal(undefined);
  });
});
