import type { ExternalRecord, PublishOutcome, RecordStore, RemoveOutcome } from '../record-store.ts';
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

/** One site's name in the zone: the CNAME at `host` to `target`, and its ownership record `mine` at `txtName`. */
interface NameToPublish {
  siteKey: string;
  host: string;
  txtName: string;
  target: string;
  mine: string;
}

/** A zone transfer and when it was asked for. */
interface TimedTransfer {
  transfer: ZoneTransfer;
  at: number;
}

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * Each site's hostname as a CNAME to its Service's cluster DNS name, in an authoritative zone updated by
 * RFC 2136 UPDATEs signed with TSIG, plus an ownership TXT record in ExternalDNS's registry format:
 * at `cname-<first label>.<rest>`, `heritage=staticsite-operator,staticsite-operator/owner=OWNER,
 * staticsite-operator/resource=staticsite/NAMESPACE/NAME`. A name is changed or deleted only under the
 * prerequisite that this site's ownership record is there, unchanged (docs/dns-records.md).
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

  /** Where the ownership record of `hostname` lives: the record type before its first label. */
  static registryName(hostname: string): string {
    const host = normalize(hostname);
    return `cname-${host}`;
  }

  async publish(siteKey: string, record: ExternalRecord): Promise<PublishOutcome> {
    const host = normalize(record.hostname);
    const target = normalize(record.service);
    if (host === this.zone || !host.endsWith(`.${this.zone}`)) {
      throw new Error(`hostname ${host} is not a name inside the zone ${this.zone} (the apex cannot be a CNAME)`);
    }
    const zone = await this.zoneRecords();
    const mine = this.ownershipText(siteKey);
    const txtName = DnsRecordStore.registryName(host);
    const outcome = await this.publishName(zone, { siteKey, host, txtName, target, mine });
    // Names this site held before (an older hostname) go once the new one is in place: one site, one name.
    const older = ownedNames(zone, mine).filter((name) => name !== txtName);
    for (const name of older) await this.guardedDelete(name, mine, siteKey);
    return older.length > 0 ? 'updated' : outcome;
  }

  private async publishName(zone: ZoneRecord[], name: NameToPublish): Promise<PublishOutcome> {
    const { siteKey, host, txtName, target, mine } = name;
    const atHost = zone.filter((r) => r.name === host);
    const txtHere = zone.filter((r) => r.name === txtName && r.type === 'TXT');
    if (txtHere.some((r) => textOf(r) === mine)) {
      const cname = atHost.find((r) => r.type === 'CNAME');
      if (cname && normalize(String(cname.data)) === target && atHost.length === 1) return 'unchanged';
      await this.send(
        [this.txtRecord(txtName, mine, CLASS.IN, 0)],
        [
          { name: host, type: TYPE.ANY, class: CLASS.ANY, ttl: 0, rdata: Buffer.alloc(0) },
          { name: host, type: TYPE.CNAME, class: CLASS.IN, ttl: this.ttl, rdata: nameWire(target) },
        ],
        `updating ${host} for StaticSite ${siteKey}`,
      );
      return 'updated';
    }
    if (atHost.length > 0 || txtHere.length > 0) {
      throw new Error(
        `${host} already exists in zone ${this.zone} and is not owned by StaticSite ${siteKey} (no ownership record at ${txtName} names it): left untouched`,
      );
    }
    try {
      await this.send(
        [
          // RFC 2136 2.4.5 "name is not in use": neither name exists, whatever raced us.
          { name: host, type: TYPE.ANY, class: CLASS.NONE, ttl: 0, rdata: Buffer.alloc(0) },
          { name: txtName, type: TYPE.ANY, class: CLASS.NONE, ttl: 0, rdata: Buffer.alloc(0) },
        ],
        [
          { name: host, type: TYPE.CNAME, class: CLASS.IN, ttl: this.ttl, rdata: nameWire(target) },
          this.txtRecord(txtName, mine, CLASS.IN, this.ttl),
        ],
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

  /** Deletes a name and its ownership record, on condition that the record still names this site. */
  private async guardedDelete(txtName: string, mine: string, siteKey: string): Promise<void> {
    const host = txtName.slice('cname-'.length);
    try {
      await this.send(
        [this.txtRecord(txtName, mine, CLASS.IN, 0)],
        [
          { name: host, type: TYPE.CNAME, class: CLASS.ANY, ttl: 0, rdata: Buffer.alloc(0) },
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
  return zone.filter((r) => r.type === 'TXT' && r.name.startsWith('cname-') && textOf(r) === text).map((r) => r.name);
}
