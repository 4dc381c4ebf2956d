import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket from 'dns-packet';
import {
  queryMessage,
  signMessage,
  type TsigKey,
  TsigStreamVerifier,
  TYPE,
  tsigErrorName,
  tsigErrorOf,
  verifyResponse,
} from './wire.ts';

/** dns-packet decodes the header's rcode, its types do not say so. */
const rcodeOf = (packet: object) => (packet as { rcode?: string }).rcode ?? 'NOERROR';

/** Where the authoritative server listens. */
export interface DnsServer {
  host: string;
  port: number;
}

/** A failure the server answered with (an rcode other than NOERROR), as opposed to no answer at all. */
export class DnsRcodeError extends Error {
  override name = 'DnsRcodeError';
  readonly rcode: string;
  /** The answer's raw bytes: a signed one names its TSIG error (BADSIG, BADKEY, BADTIME). */
  constructor(what: string, rcode: string, answer?: Buffer) {
    const tsigError = answer && tsigErrorOf(answer);
    super(`${what}: the DNS server answered ${rcode}${tsigError ? ` (TSIG error ${tsigErrorName(tsigError)})` : ''}`);
    this.rcode = rcode;
  }
}

export interface ZoneRecord {
  name: string;
  type: string;
  data: unknown;
}

/** A zone as one transfer delivered it: its SOA serial and every other record. */
export interface ZoneTransfer {
  serial: number;
  records: ZoneRecord[];
}

/** The server side of the DNS store: signed UPDATEs and SOA queries over UDP, signed zone transfers over TCP. */
export interface DnsTransport {
  update(message: Buffer, what: string): Promise<void>;
  serial(zone: string): Promise<number>;
  transfer(zone: string): Promise<ZoneTransfer>;
}

/** What the client asks of the server. */
export type DnsOperation = 'update' | 'soa' | 'transfer';

/**
 * Called once per exchange: the server's rcode (NOERROR on success), or `error` when there was no
 * usable answer (a timeout, a refused connection, a bad signature).
 */
export type DnsObserver = (operation: DnsOperation, result: string, seconds: number) => void;

export interface DnsClientOptions {
  server: DnsServer;
  /** The key, or where to get it before each exchange (a key file that may be rotated). */
  key: TsigKey | (() => Promise<TsigKey>);
  timeoutMs?: number;
  /** Seconds since the epoch, for TSIG's time signed. */
  now?: () => number;
  observe?: DnsObserver;
}

/** RFC 2136 UPDATEs and SOA queries over UDP, AXFR over TCP, all signed with TSIG HMAC-SHA256. */
export class DnsClient implements DnsTransport {
  private readonly options: Required<DnsClientOptions>;

  constructor(options: DnsClientOptions) {
    this.options = {
      server: options.server,
      key: options.key,
      timeoutMs: options.timeoutMs ?? 3_000,
      now: options.now ?? (() => Math.floor(Date.now() / 1000)),
      observe: options.observe ?? (() => {}),
    };
  }

  // The key is read before each exchange is timed: a key file that fails is not a DNS answer.
  async update(message: Buffer, what: string): Promise<void> {
    const key = await this.key();
    await this.observed('update', () => this.signedExchange(key, message, what));
  }

  async serial(zone: string): Promise<number> {
    const key = await this.key();
    return this.observed('soa', () => this.querySerial(key, zone));
  }

  async transfer(zone: string): Promise<ZoneTransfer> {
    const key = await this.key();
    return this.observed('transfer', () => this.transferZone(key, zone));
  }

  private async observed<T>(operation: DnsOperation, exchange: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let result = 'NOERROR';
    try {
      return await exchange();
    } catch (error) {
      result = error instanceof DnsRcodeError ? error.rcode : 'error';
      throw error;
    } finally {
      try {
        this.options.observe(operation, result, (performance.now() - started) / 1000);
      } catch {
        // A failing metric must not change the exchange's outcome.
      }
    }
  }

  /** The zone's SOA serial (a signed query over UDP, the answer's MAC checked). */
  private async querySerial(key: TsigKey, zone: string): Promise<number> {
    const what = `the SOA query for ${zone}`;
    const packet = await this.signedExchange(key, queryMessage(zone, TYPE.SOA), what);
    const soa = (packet.answers ?? []).find((a) => a.type === 'SOA');
    const serial = soa?.data.serial;
    if (serial === undefined) {
      throw new Error(`${what}: the DNS server answered without an SOA record (is it authoritative for ${zone}?)`);
    }
    return serial;
  }

  /**
   * One message (an UPDATE, a query) signed and sent over UDP, its answer decoded: NOERROR and a valid
   * MAC, or an error naming `what` and the rcode or what is wrong with the answer.
   */
  private async signedExchange(key: TsigKey, message: Buffer, what: string): Promise<dnsPacket.Packet> {
    const { wire, mac } = signMessage(message, key, this.options.now());
    const response = await this.exchangeUdp(wire, what);
    let packet: dnsPacket.Packet;
    try {
      packet = dnsPacket.decode(response);
    } catch (error) {
      throw new Error(`${what}: the DNS server's answer is malformed (${(error as Error).message})`);
    }
    const rcode = rcodeOf(packet);
    if (rcode !== 'NOERROR') throw new DnsRcodeError(what, rcode, response);
    try {
      verifyResponse(response, key, mac);
    } catch (error) {
      throw new Error(`${what}: ${(error as Error).message}`);
    }
    return packet;
  }

  /**
   * Every record of the zone (AXFR over TCP), the request signed and every message of the answer
   * checked (RFC 8945 section 5.3.1): the store decides what it owns from these records.
   */
  private transferZone(key: TsigKey, zone: string): Promise<ZoneTransfer> {
    const { server, timeoutMs } = this.options;
    const { wire, mac } = signMessage(queryMessage(zone, TYPE.AXFR), key, this.options.now());
    const verifier = new TsigStreamVerifier(key, mac);
    return new Promise((resolve, reject) => {
      const socket = connect(server.port, server.host);
      const records: ZoneRecord[] = [];
      let buffered = Buffer.alloc(0);
      let soas = 0;
      let serial = 0;
      const fail = (error: Error) => {
        socket.destroy();
        reject(error);
      };
      socket.setTimeout(timeoutMs, () =>
        fail(new Error(`zone transfer of ${zone} from ${server.host}:${server.port} timed out`)),
      );
      socket.on('error', (error) =>
        fail(new Error(`zone transfer of ${zone} from ${server.host}:${server.port}: ${error.message}`)),
      );
      socket.on('connect', () =>
        socket.write(Buffer.concat([Buffer.from([wire.length >> 8, wire.length & 0xff]), wire])),
      );
      const where = `zone transfer of ${zone} from ${server.host}:${server.port}`;
      /** One framed message of the answer; true once the closing SOA has come. Throws on a bad one. */
      const take = (message: Buffer): boolean => {
        const packet = dnsPacket.decode(message);
        const rcode = rcodeOf(packet);
        if (rcode !== 'NOERROR') throw new DnsRcodeError(`zone transfer of ${zone}`, rcode, message);
        verifier.message(message);
        for (const answer of packet.answers ?? []) {
          if (answer.type === 'SOA') {
            // NaN when missing: equal to no serial, so never reused.
            if (soas++ === 0) serial = answer.data.serial ?? Number.NaN;
          } else
            records.push({
              name: answer.name.toLowerCase(),
              type: answer.type,
              data: (answer as { data?: unknown }).data,
            });
        }
        // The transfer ends with the zone's SOA again.
        if (soas < 2) return false;
        verifier.end();
        return true;
      };
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 2) {
          const length = buffered.readUInt16BE(0);
          if (buffered.length < 2 + length) return;
          const message = buffered.subarray(2, 2 + length);
          buffered = buffered.subarray(2 + length);
          try {
            if (!take(message)) continue;
          } catch (error) {
            // A malformed or unsigned message fails this transfer, never the process.
            if (error instanceof DnsRcodeError) return fail(error);
            return fail(new Error(`${where}: ${(error as Error).message}`));
          }
          socket.end();
          return resolve({ serial, records });
        }
      });
      socket.on('close', () => {
        if (soas < 2) fail(new Error(`${where} ended early`));
      });
    });
  }

  private key(): Promise<TsigKey> {
    const { key } = this.options;
    return typeof key === 'function' ? key() : Promise.resolve(key);
  }

  private exchangeUdp(wire: Buffer, what: string): Promise<Buffer> {
    const { server, timeoutMs } = this.options;
    return new Promise((resolve, reject) => {
      const socket = createSocket(server.host.includes(':') ? 'udp6' : 'udp4');
      const id = wire.readUInt16BE(0);
      const timer = setTimeout(() => {
        socket.close();
        reject(
          new Error(`${what}: no answer from the DNS server ${server.host}:${server.port} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      socket.on('error', (error) => {
        clearTimeout(timer);
        socket.close();
        reject(new Error(`${what}: ${error.message}`));
      });
      socket.on('message', (message) => {
        if (message.length < 2 || message.readUInt16BE(0) !== id) return; // not ours
        clearTimeout(timer);
        socket.close();
        resolve(message);
      });
      socket.send(wire, server.port, server.host);
    });
  }
}
