import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DnsClient } from '../../../controller/records/dns/client.ts';
import type { BindServer } from '../../../devenv/dns/bind.ts';
import type { FinalRecord } from '../history/index.ts';

const run = promisify(execFile);

/** One record of the zone, its data as text (a TXT record's strings joined). */
export interface ZoneEntry {
  name: string;
  type: string;
  data: string;
}

const OWNERSHIP =
  /^heritage=staticsite-operator,staticsite-operator\/owner=[^,]+,staticsite-operator\/resource=staticsite\/([^/]+\/[^/]+)$/;
const REGISTRY_PREFIX = /^(a|aaaa|cname)-(.+)$/;

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

function dataText(data: unknown): string {
  const parts = Array.isArray(data) ? data : [data];
  return parts.map((d) => (Buffer.isBuffer(d) ? d.toString('utf8') : String(d))).join('');
}

/** Every record of the zone but its SOA, by a signed zone transfer from the running server. */
export async function transferZone(bind: BindServer): Promise<ZoneEntry[]> {
  const client = new DnsClient({
    server: { host: '127.0.0.1', port: bind.port },
    key: { name: bind.keyName, secret: bind.secret },
  });
  const { records } = await client.transfer(bind.zone);
  return sortEntries(
    records.map((r) => ({
      name: normalize(r.name),
      type: r.type,
      data: r.type === 'TXT' ? dataText(r.data) : normalize(dataText(r.data)),
    })),
  );
}

/**
 * The zone as named will load it at its next start, read while it is stopped: its file with the
 * journal of the updates applied (`named-compilezone -j`), every record but the SOA.
 */
export async function zoneOnDisk(bind: BindServer): Promise<ZoneEntry[]> {
  const { stdout } = await run(await which('named-compilezone'), [
    ...['-j', '-f', 'text', '-F', 'text', '-s', 'full', '-o', '-'],
    bind.zone,
    join(bind.dir, 'zone.db'),
  ]);
  const entries: ZoneEntry[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^(\S+)\s+\d+\s+IN\s+(\S+)\s+(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, name, type, rdata] = match as unknown as [string, string, string, string];
    if (type === 'SOA') continue;
    const data =
      type === 'TXT'
        ? [...rdata.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1')).join('')
        : normalize(rdata.trim());
    entries.push({ name: normalize(name), type, data });
  }
  return sortEntries(entries);
}

/** The sites' records, from their ownership TXT records (ExternalDNS's registry format, as the DNS store writes it). */
export function ownedRecords(entries: readonly ZoneEntry[]): FinalRecord[] {
  return entries.flatMap((e) => {
    const host = REGISTRY_PREFIX.exec(e.name)?.[2];
    const siteKey = e.type === 'TXT' ? OWNERSHIP.exec(e.data)?.[1] : undefined;
    return host && siteKey ? [{ siteKey, hostname: host }] : [];
  });
}

/** The entries at a site's hostname and at its ownership records' names, one line each, for comparing. */
export function entriesAt(entries: readonly ZoneEntry[], hostname: string): string[] {
  const names = new Set([hostname, ...['a', 'aaaa', 'cname'].map((t) => `${t}-${hostname}`)]);
  return entries.filter((e) => names.has(e.name)).map((e) => `${e.name} ${e.type} ${e.data}`);
}

function sortEntries(entries: ZoneEntry[]): ZoneEntry[] {
  const line = (e: ZoneEntry) => `${e.name} ${e.type} ${e.data}`;
  return entries.sort((a, b) => (line(a) < line(b) ? -1 : line(a) > line(b) ? 1 : 0));
}

async function which(command: string): Promise<string> {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    try {
      await access(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {}
  }
  throw new Error(`${command} is missing: apt-get install bind9-utils`);
}
