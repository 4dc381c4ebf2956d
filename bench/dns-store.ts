/**
 * What a settled site costs the DNS server per reconcile: the DNS store as shipped (an SOA query,
 * the last zone transfer reused while the serial is unchanged) beside the same store made to
 * transfer the zone every time (transferMaxAgeMs 0: what it did before, plus the SOA query), against Debian's BIND 9
 * holding `sites` StaticSites' records (a CNAME and an ownership TXT each). Alternating rounds of
 * `publishes` unchanged publishes each; per-publish medians and the ratio.
 *
 * Run: node bench/dns-store.ts [sites=1000] [publishes=200] [rounds=5]
 */
import { cpus, loadavg } from 'node:os';
import { DnsClient } from '../controller/records/dns/client.ts';
import { DnsRecordStore } from '../controller/records/dns/dns-record-store.ts';
import { BindServer } from '../devenv/dns/bind.ts';

const sites = Number(process.argv[2] ?? 1000);
const publishes = Number(process.argv[3] ?? 200);
const rounds = Number(process.argv[4] ?? 5);
const OWNER = 'bench-cluster';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const site = (i: number) => ({
  key: `web/site-${i}`,
  record: {
    hostname: `site-${i}.web.sites.staticsite.dev`,
    service: `site-${i}.web.svc.cluster.local`,
    port: 80,
    site: `web/site-${i}`,
  },
});

const bind = new BindServer();
await bind.start();
try {
  const client = new DnsClient({
    server: { host: '127.0.0.1', port: bind.port },
    key: { name: bind.keyName, secret: bind.secret },
  });
  const zone = bind.zone;
  const namer = new DnsRecordStore(client, { zone, owner: OWNER });
  // The zone filled by nsupdate in batches: the records the store would have written.
  for (let start = 0; start < sites; start += 250) {
    const batch: string[] = [];
    for (let i = start; i < Math.min(sites, start + 250); i++) {
      const { key, record } = site(i);
      batch.push(`${record.hostname} 300 CNAME ${record.service}.`);
      batch.push(`${DnsRecordStore.registryName(record.hostname)} 300 TXT "${namer.ownershipText(key)}"`);
    }
    await bind.nsupdate(batch);
  }
  const size = await bind.transferSize();

  const shipped = new DnsRecordStore(client, { zone, owner: OWNER });
  const everyTime = new DnsRecordStore(client, { zone, owner: OWNER, transferMaxAgeMs: 0 });
  const timeRound = async (store: DnsRecordStore, round: number): Promise<number> => {
    const started = performance.now();
    for (let n = 0; n < publishes; n++) {
      const { key, record } = site((round * publishes + n) % sites);
      const outcome = await store.publish(key, record);
      if (outcome !== 'unchanged') throw new Error(`${key}: ${outcome}, expected unchanged`);
    }
    return (performance.now() - started) / publishes;
  };
  await timeRound(shipped, 0); // warm both: the first call transfers
  await timeRound(everyTime, 0);
  const perPublish = { shipped: [] as number[], everyTime: [] as number[] };
  const loads: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    loads.push(loadavg()[0] ?? 0);
    perPublish.shipped.push(await timeRound(shipped, r));
    perPublish.everyTime.push(await timeRound(everyTime, r));
  }
  const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
  const row = (label: string, xs: number[]) =>
    `| ${label} | ${fmt(median(xs))} | ${fmt(Math.min(...xs))} | ${fmt(Math.max(...xs))} |`;
  console.log(`${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}`);
  console.log(
    `zone: ${size.records} records, an AXFR of ${size.messages} messages and ${size.bytes} bytes; ${rounds} alternating rounds of ${publishes} unchanged publishes; load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
  );
  console.log('| per unchanged publish | median of rounds | min | max |');
  console.log('|---|---|---|---|');
  console.log(row('shipped: SOA query, transfer reused', perPublish.shipped));
  console.log(row('a transfer every time', perPublish.everyTime));
  console.log(
    `ratio (every time / shipped): ${(median(perPublish.everyTime) / median(perPublish.shipped)).toFixed(1)}x`,
  );
} finally {
  await bind.dispose();
}
