import { expect } from 'chai';
import pino from 'pino';
import { bootstrap } from '../../certs/bootstrap.ts';
import { DAY_MS, defaultConfig } from '../../certs/config.ts';
import { CertsError } from '../../certs/errors.ts';
import { watch } from '../../certs/watch.ts';
import { generateRsaKeyPem } from '../../certs/x509.ts';
import { MemoryStore } from '../support/certs/memory-store.ts';
import { AutoAdvancingClock } from '../support/kube/index.ts';

const quiet = pino({ level: 'silent' });
const HOUR = 3_600_000;

describe('certs: --watch loop', () => {
  it('re-checks every interval and renews ahead of expiry, never letting the serving cert run out', async () => {
    const clock = new AutoAdvancingClock('2026-03-01T00:00:00Z');
    const store = new MemoryStore();
    const controller = new AbortController();
    const expiriesSeen: number[] = [];
    let passes = 0;
    const config = defaultConfig('svc', 'ns');
    await watch(
      async () => {
        const result = await bootstrap(config, {
          store,
          clock,
          logger: quiet,
          generateKey: () => generateRsaKeyPem(1024),
        });
        expect(clock.now()).to.be.lessThan(result.serving.notAfter.getTime());
        expiriesSeen.push(result.serving.notAfter.getTime());
        if (++passes === 200 || clock.now() > Date.parse('2026-09-01T00:00:00Z')) controller.abort();
        return result;
      },
      { clock, logger: quiet, signal: controller.signal, checkIntervalMs: 24 * HOUR },
    );
    // 184 days at most one check a day, with renewals at 60-day steps: 4 distinct serving certs.
    expect(new Set(expiriesSeen).size).to.equal(4);
    expect(passes).to.be.within(180, 190);
  });

  it('sleeps until the next due time when that is sooner than the interval', async () => {
    const clock = new AutoAdvancingClock('2026-03-01T00:00:00Z');
    const delays = clock.delays;
    const controller = new AbortController();
    const due = new Date('2026-03-01T00:30:00Z');
    await watch(
      async () => {
        if (delays.length === 1) controller.abort();
        return { nextDue: due } as Awaited<ReturnType<typeof bootstrap>>;
      },
      { clock, logger: quiet, signal: controller.signal, checkIntervalMs: HOUR },
    );
    expect(delays).to.deep.equal([30 * 60_000]);
  });

  it('retries a failing pass with doubling delays capped at 5 minutes, then goes back to the interval', async () => {
    const clock = new AutoAdvancingClock('2026-03-01T00:00:00Z');
    const delays = clock.delays;
    const controller = new AbortController();
    let calls = 0;
    await watch(
      async () => {
        calls++;
        if (calls <= 7) throw new CertsError('Forbidden', 'cannot get Secret ns/x');
        controller.abort();
        return { nextDue: new Date(clock.now() + 10 * DAY_MS) } as Awaited<ReturnType<typeof bootstrap>>;
      },
      { clock, logger: quiet, signal: controller.signal, checkIntervalMs: HOUR },
    );
    expect(delays).to.deep.equal([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });
});
