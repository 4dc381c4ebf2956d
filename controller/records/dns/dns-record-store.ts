import { v4, v6 } from '@leichtgewicht/ip-codec';
import {
  type ExternalRecord,
  type PublishOutcome,
  type RecordSet,
  type RecordStore,
  type RecordType,
  type RemoveOutcome,
  recordSets,
} from '../record-store.ts';
import { DnsRcodeError, type DnsTransport, type ZoneRecord, type ZoneTransfer } from './client.ts';
import { CLASS, nameWire, TYPE, txtRdata, updateMessage, type WireRecord } from './wire.ts';

export interface DnsRecordStoreOptions {
  zone: string;
  /** Written into every ownership record; records of another owner are never changed. */
  owner: string;
  ttlSeconds?: number;
  /** How long a transfer may be reused while the serial stays the same (default 60 s). */
  transferMaxAgeMs?: number;
  /** Milliseconds, for the transfer's age. */
  now?: () => number;
}

/** One site's name in the zone: the record sets at `host`, and its ownership text `mine`. */
interface NameToPublish {
  siteKey: string;
  host: string;
  sets: RecordSet[];
  mine: string;
}

/** A zone transfer and when it was asked for. */
interface TimedTransfer {
  transfer: ZoneTransfer;
  at: number;
}

const RECORD_TYPES: readonly RecordType[] = ['A', 'AAAA', 'CNAME'];

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** A value as the zone holds it, comparable with what a transfer shows: addresses in canonical form, names normalized. */
function canonical(type: RecordType, value: string): string {
  if (type === 'A') return v4.decode(v4.encode(value));
  if (type === 'AAAA') return v6.decode(v6.encode(value));
  return normalize(value);
}

function rdataOf(type: RecordType, value: string): Buffer {
  if (type === 'A') return Buffer.from(v4.encode(value));
  if (type === 'AAAA') return Buffer.from(v6.encode(value));
  return nameWire(value);
}

/** The hostname and record type an ownership record's name stands for (`a-`, `aaaa-`, `cname-` before the hostname). */
function parseRegistryName(name: string): { type: RecordType; host: string } | undefined {
  for (const type of RECORD_TYPES) {
    const prefix = `${type.toLowerCase()}-`;
    if (name.startsWith(prefix)) return { type, host: name.slice(prefix.length) };
  }
  return undefined;
}

/**
 * Each site's hostname as records in an authoritative zone updated by RFC 2136 UPDATEs signed with
 * TSIG: a CNAME to its Service's cluster DNS name, or, behind a Gateway, A and AAAA records of the
 * Gateway's addresses (a CNAME to its hostname when it has no IP). Beside each record set an ownership
 * TXT record in ExternalDNS's registry format, named after the record type: `cname-`, `a-` or `aaaa-`
 * before the hostname, `heritage=staticsite-operator,staticsite-operator/owner=OWNER,
 * staticsite-operator/resource=staticsite/NAMESPACE/NAME`. A name is changed or deleted only under
 * the prerequisite that this site's ownership records are there, unchanged (docs/dns-records.md).
 */
export class DnsRecordStore implements RecordStore {
  private readonly transport: DnsTransport;
  private readonly zone: string;
  private readonly owner: string;
  private readonly ttl: number;
  private readonly transferMaxAgeMs: number;
  private readonly now: () => number;
  /** The last transfer and when it started: reused while the serial is unchanged and it is young. */
  private lastTransfer: TimedTransfer | undefined;
  /** A transfer under way, which concurrent callers share instead of starting their own. */
  private pending: Promise<TimedTransfer> | undefined;

  constructor(transport: DnsTransport, options: DnsRecordStoreOptions) {
    this.transport = transport;
    this.zone = normalize(options.zone);
    this.owner = options.owner;
    this.ttl = options.ttlSeconds ?? 300;
    this.transferMaxAgeMs = options.transferMaxAgeMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** The ownership record's text for a site. */
  ownershipText(siteKey: string): string {
    return `heritage=staticsite-operator,staticsite-operator/owner=${this.owner},staticsite-operator/resource=staticsite/${siteKey}`;
  }

  /** Where the ownership record of `hostname`'s records of `type` lives: the record type before its first label. */
  static registryName(hostname: string, type: RecordType = 'CNAME'): string {
    return `${type.toLowerCase()}-${normalize(hostname)}`;
  }

  async publish(siteKey: string, record: ExternalRecord): Promise<PublishOutcome> {
    const host = normalize(record.hostname);
    if (host === this.zone || !host.endsWith(`.${this.zone}`)) {
      throw new Error(`hostname ${host} is not a name inside the zone ${this.zone} (the apex cannot be a CNAME)`);
    }
    const sets = recordSets(record).map((set) => ({
      type: set.type,
      values: set.values.map((v) => canonical(set.type, v)).sort(),
    }));
    const zone = await this.zoneRecords();
    const mine = this.ownershipText(siteKey);
    const outcome = await this.publishName(zone, { siteKey, host, sets, mine });
    // Names this site held before (an older hostname) go once the new one is in place: one site, one name.
    const older = ownedNames(zone, mine).filter((name) => parseRegistryName(name)?.host !== host);
    for (const name of older) await this.guardedDelete(name, mine, siteKey);
    return older.length > 0 ? 'updated' : outcome;
  }

  private async publishName(zone: ZoneRecord[], name: NameToPublish): Promise<PublishOutcome> {
    const { siteKey, host, sets, mine } = name;
    const atHost = zone.filter((r) => r.name === host);
    const wanted = sets.map((set) => DnsRecordStore.registryName(host, set.type));
    const owned = ownedNames(zone, mine).filter((n) => parseRegistryName(n)?.host === host);
    const inUse = (txtName: string) => zone.some((r) => r.name === txtName);
    const records = sets.flatMap((set) =>
      set.values.map((value) => ({
        name: host,
        type: TYPE[set.type],
        class: CLASS.IN,
        ttl: this.ttl,
        rdata: rdataOf(set.type, value),
      })),
    );
    const notInUse = (n: string): WireRecord => ({
      name: n,
      type: TYPE.ANY,
      class: CLASS.NONE,
      ttl: 0,
      rdata: Buffer.alloc(0),
    });
    if (owned.length > 0) {
      if (sameRecords(atHost, sets) && sameNames(owned, wanted)) return 'unchanged';
      const added = wanted.filter((n) => !owned.includes(n));
      const foreign = added.find(inUse);
      if (foreign) {
        throw new Error(
          `${foreign} already exists in zone ${this.zone} and does not name StaticSite ${siteKey}: ${host} left as it is`,
        );
      }
      await this.send(
        [...owned.map((n) => this.txtRecord(n, mine, CLASS.IN, 0)), ...added.map(notInUse)],
        [
          { name: host, type: TYPE.ANY, class: CLASS.ANY, ttl: 0, rdata: Buffer.alloc(0) },
          ...owned.filter((n) => !wanted.includes(n)).map((n) => this.txtRecord(n, mine, CLASS.NONE, 0)),
          ...records,
          ...added.map((n) => this.txtRecord(n, mine, CLASS.IN, this.ttl)),
        ],
        `updating ${host} for StaticSite ${siteKey}`,
      );
      return 'updated';
    }
    if (atHost.length > 0 || wanted.some(inUse)) {
      throw new Error(
        `${host} already exists in zone ${this.zone} and is not owned by StaticSite ${siteKey} (no ownership record at ${wanted.join(', ')} names it): left untouched`,
      );
    }
    try {
      await this.send(
        // RFC 2136 2.4.5 "name is not in use": none of the names exists, whatever raced us.
        [notInUse(host), ...wanted.map(notInUse)],
        [...records, ...wanted.map((n) => this.txtRecord(n, mine, CLASS.IN, this.ttl))],
        `creating ${host} for StaticSite ${siteKey}`,
      );
    } catch (error) {
      if (error instanceof DnsRcodeError && error.rcode === 'YXDOMAIN') {
        throw new Error(`${host} was created in zone ${this.zone} by someone else meanwhile: left untouched`);
      }
      throw error;
    }
    return 'created';
  }

  async remove(siteKey: string): Promise<RemoveOutcome> {
    const mine = this.ownershipText(siteKey);
    const owned = ownedNames(await this.zoneRecords(), mine);
    for (const txtName of owned) await this.guardedDelete(txtName, mine, siteKey);
    return owned.length > 0 ? 'removed' : 'absent';
  }

  /**
   * The zone's records: a new transfer when the SOA serial moved since the last one (every UPDATE,
   * ours or anyone's, moves it) or the last one is older than transferMaxAgeMs, so a settled site
   * mostly costs one SOA query. The age bound repairs what a serial cannot show: a zone file
   * reloaded without a new serial, a database edited behind the server's back. A refused UPDATE
   * drops the cache too (see send).
   */
  private async zoneRecords(): Promise<ZoneRecord[]> {
    const serial = await this.transport.serial(this.zone);
    const fresh = (t: TimedTransfer | undefined): t is TimedTransfer =>
      t !== undefined && t.transfer.serial === serial && this.now() - t.at < this.transferMaxAgeMs;
    const last = this.lastTransfer;
    if (fresh(last)) return last.transfer.records;
    const shared = await this.pending?.catch(() => undefined);
    if (fresh(shared)) return shared.transfer.records;
    const at = this.now();
    const pending = this.transport.transfer(this.zone).then((transfer) => ({ transfer, at }));
    this.pending = pending;
    try {
      const done = await pending;
      if (!this.lastTransfer || this.lastTransfer.at <= done.at) this.lastTransfer = done;
      return done.transfer.records;
    } finally {
      if (this.pending === pending) this.pending = undefined;
    }
  }

  /** Deletes a name's records of one type and their ownership record, on condition that it still names this site. */
  private async guardedDelete(txtName: string, mine: string, siteKey: string): Promise<void> {
    const parsed = parseRegistryName(txtName);
    if (!parsed) return;
    const { host, type } = parsed;
    try {
      await this.send(
        [this.txtRecord(txtName, mine, CLASS.IN, 0)],
        [
          { name: host, type: TYPE[type], class: CLASS.ANY, ttl: 0, rdata: Buffer.alloc(0) },
          this.txtRecord(txtName, mine, CLASS.NONE, 0),
        ],
        `deleting ${host} of StaticSite ${siteKey}`,
      );
    } catch (error) {
      // NXRRSET: the ownership record is gone or changed since the transfer: not ours to delete now.
      if (!(error instanceof DnsRcodeError && error.rcode === 'NXRRSET')) throw error;
    }
  }

  private txtRecord(name: string, text: string, klass: number, ttl: number): WireRecord {
    return { name, type: TYPE.TXT, class: klass, ttl, rdata: txtRdata(text) };
  }

  private async send(prerequisites: WireRecord[], updates: WireRecord[], what: string): Promise<void> {
    try {
      await this.transport.update(updateMessage(this.zone, prerequisites, updates), what);
    } catch (error) {
      // The zone is not what the transfer said (a prerequisite failed) or the server is unwell.
      this.lastTransfer = undefined;
      throw error;
    }
  }
}

function textOf(r: ZoneRecord): string {
  const data = Array.isArray(r.data) ? r.data : [r.data];
  return data.map((d) => (Buffer.isBuffer(d) ? d.toString('utf8') : String(d))).join('');
}

/** The ownership records (their names) that carry exactly `text`. */
function ownedNames(zone: ZoneRecord[], text: string): string[] {
  return zone.filter((r) => r.type === 'TXT' && parseRegistryName(r.name) && textOf(r) === text).map((r) => r.name);
}

/** Whether the records at a name are exactly `sets`: the same types with the same values, nothing else. */
function sameRecords(atHost: ZoneRecord[], sets: RecordSet[]): boolean {
  const have = atHost.map((r) => {
    const type = RECORD_TYPES.find((t) => t === r.type);
    return type ? `${type} ${canonical(type, String(r.data))}` : `${r.type} ?`;
  });
  const want = sets.flatMap((set) => set.values.map((v) => `${set.type} ${v}`));
  return sameNames(have, want);
}

const sameNames = (a: string[], b: string[]) =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
