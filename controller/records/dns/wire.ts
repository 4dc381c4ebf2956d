import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * The parts of RFC 2136 (dynamic UPDATE) and RFC 8945 (TSIG) that dns-packet cannot write: class NONE
 * (254) and empty RDATA for deletes, the UPDATE opcode, and the TSIG record and its HMAC. Responses are
 * decoded with dns-packet (client.ts).
 */
export const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
export const TYPE = { A: 1, AAAA: 28, CNAME: 5, SOA: 6, TXT: 16, ANY: 255, TSIG: 250, AXFR: 252 } as const;
const OPCODE_UPDATE = 5;
const FUDGE_SECONDS = 300;
const HMAC_SHA256 = 'hmac-sha256';

export interface TsigKey {
  name: string;
  /** The shared secret (BIND's base64 `secret`, decoded). */
  secret: Buffer;
}

/** One resource record of a prerequisite or update section; `rdata` empty for the delete forms. */
export interface WireRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  rdata: Buffer;
}

const u16 = (v: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v);
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v);
  return b;
};
const u48 = (v: number) => {
  const b = Buffer.alloc(6);
  b.writeUIntBE(v, 0, 6);
  return b;
};

/** A domain name in wire form: lowercase, uncompressed, absolute (TSIG's canonical form too). */
export function nameWire(name: string): Buffer {
  const labels = name.replace(/\.$/, '').toLowerCase().split('.').filter(Boolean);
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'ascii');
    if (bytes.length > 63) throw new Error(`DNS label "${label}" is longer than 63 bytes`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/** TXT RDATA: the text as character-strings of at most 255 bytes each. */
export function txtRdata(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

function recordWire(r: WireRecord): Buffer {
  return Buffer.concat([nameWire(r.name), u16(r.type), u16(r.class), u32(r.ttl), u16(r.rdata.length), r.rdata]);
}

function header(id: number, flags: number, counts: [number, number, number, number]): Buffer {
  return Buffer.concat([u16(id), u16(flags), ...counts.map(u16)]);
}

/** An UPDATE message for `zone` (RFC 2136 section 2): prerequisites, then updates. */
export function updateMessage(zone: string, prerequisites: WireRecord[], updates: WireRecord[], id = randomInt(65536)) {
  return Buffer.concat([
    header(id, OPCODE_UPDATE << 11, [1, prerequisites.length, updates.length, 0]),
    nameWire(zone),
    u16(TYPE.SOA),
    u16(CLASS.IN),
    ...prerequisites.map(recordWire),
    ...updates.map(recordWire),
  ]);
}

/** A query (here: AXFR over TCP) for one name and type. */
export function queryMessage(name: string, type: number, id = randomInt(65536)): Buffer {
  return Buffer.concat([header(id, 0, [1, 0, 0, 0]), nameWire(name), u16(type), u16(CLASS.IN)]);
}

/** The TSIG variables a MAC covers (RFC 8945 section 4.3.3), besides the message itself. */
interface TsigTimers {
  timeSigned: number;
  fudge: number;
  error: number;
  other: Buffer;
}

function tsigVariables(key: TsigKey, { timeSigned, fudge, error, other }: TsigTimers): Buffer {
  return Buffer.concat([
    nameWire(key.name),
    u16(CLASS.ANY),
    u32(0),
    nameWire(HMAC_SHA256),
    u48(timeSigned),
    u16(fudge),
    u16(error),
    u16(other.length),
    other,
  ]);
}

/** Signs a message with TSIG HMAC-SHA256 (RFC 8945 section 4.2): the message plus its TSIG record, and the MAC. */
export function signMessage(message: Buffer, key: TsigKey, nowSeconds: number): { wire: Buffer; mac: Buffer } {
  const originalId = message.readUInt16BE(0);
  const mac = createHmac('sha256', key.secret)
    .update(message)
    .update(tsigVariables(key, { timeSigned: nowSeconds, fudge: FUDGE_SECONDS, error: 0, other: Buffer.alloc(0) }))
    .digest();
  const rdata = Buffer.concat([
    nameWire(HMAC_SHA256),
    u48(nowSeconds),
    u16(FUDGE_SECONDS),
    u16(mac.length),
    mac,
    u16(originalId),
    u16(0),
    u16(0),
  ]);
  const wire = Buffer.concat([
    message,
    recordWire({ name: key.name, type: TYPE.TSIG, class: CLASS.ANY, ttl: 0, rdata }),
  ]);
  wire.writeUInt16BE(message.readUInt16BE(10) + 1, 10); // ARCOUNT
  return { wire, mac };
}

function skipName(buf: Buffer, offset: number): number {
  let o = offset;
  for (;;) {
    const len = buf[o] as number;
    if (len === undefined) throw new Error('truncated DNS name');
    if ((len & 0xc0) === 0xc0) return o + 2;
    if (len === 0) return o + 1;
    o += len + 1;
  }
}

/** A message's TSIG record, read off the wire, and the message as it was before signing. */
interface SignedParts {
  /** The message without its TSIG record: the original ID back, ARCOUNT one less (RFC 8945 section 4.3.1). */
  body: Buffer;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  error: number;
  other: Buffer;
}

/** The message's TSIG record (the last record, RFC 8945 section 5.1), or undefined when it has none. */
function signedParts(message: Buffer): SignedParts | undefined {
  const arcount = message.readUInt16BE(10);
  if (arcount === 0) return undefined;
  let o = 12;
  const counts = [0, 1, 2, 3].map((i) => message.readUInt16BE(4 + 2 * i));
  for (let q = 0; q < (counts[0] as number); q++) o = skipName(message, o) + 4;
  const records = (counts[1] as number) + (counts[2] as number) + (counts[3] as number);
  let tsigStart = -1;
  let rdataStart = 0;
  for (let r = 0; r < records; r++) {
    const start = o;
    o = skipName(message, o);
    const type = message.readUInt16BE(o);
    const rdlength = message.readUInt16BE(o + 8);
    if (r === records - 1 && type === TYPE.TSIG) {
      tsigStart = start;
      rdataStart = o + 10;
    }
    o += 10 + rdlength;
  }
  if (tsigStart < 0) return undefined;
  let p = skipName(message, rdataStart);
  const timeSigned = message.readUIntBE(p, 6);
  const fudge = message.readUInt16BE(p + 6);
  p += 8;
  const macLength = message.readUInt16BE(p);
  const mac = message.subarray(p + 2, p + 2 + macLength);
  p += 2 + macLength;
  const originalId = message.readUInt16BE(p);
  const error = message.readUInt16BE(p + 2);
  const otherLength = message.readUInt16BE(p + 4);
  const other = message.subarray(p + 6, p + 6 + otherLength);
  const body = Buffer.from(message.subarray(0, tsigStart));
  body.writeUInt16BE(originalId, 0);
  body.writeUInt16BE(arcount - 1, 10);
  return { body, timeSigned, fudge, mac, error, other };
}

/** signedParts, with a record cut short or out of bounds named as what it is. */
function readSignedParts(message: Buffer): SignedParts | undefined {
  try {
    return signedParts(message);
  } catch {
    throw new Error('a message of the answer has a malformed record or TSIG record');
  }
}

const macMatches = (mac: Buffer, expected: Buffer) => mac.length === expected.length && timingSafeEqual(mac, expected);
const priorMac = (mac: Buffer) => Buffer.concat([u16(mac.length), mac]);

/** RFC 8945 section 3 (and RFC 6895's registry): the TSIG error codes a server may answer. */
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };
export const tsigErrorName = (code: number) => TSIG_ERRORS[code] ?? String(code);

/** The TSIG error a message carries (0 for none), or undefined when it is not signed. */
export function tsigErrorOf(message: Buffer): number | undefined {
  try {
    return signedParts(message)?.error;
  } catch {
    return undefined; // a truncated or malformed message: no readable TSIG
  }
}

/** RFC 8945 section 5.3.1: at most 99 unsigned messages between two signed ones. */
const MAX_UNSIGNED_RUN = 99;

/**
 * Checks the TSIG of every message of a multi-message answer (a zone transfer over TCP), RFC 8945
 * section 5.3.1: the first message is signed as a single answer is; each later signed message's MAC
 * covers the previous MAC, the unsigned messages since it, the message itself and only its timers.
 * `message` and `end` throw on a message that fails.
 */
export class TsigStreamVerifier {
  private readonly key: TsigKey;
  private mac: Buffer;
  private first = true;
  private unsigned: Buffer[] = [];

  constructor(key: TsigKey, requestMac: Buffer) {
    this.key = key;
    this.mac = requestMac;
  }

  message(message: Buffer): void {
    const signed = readSignedParts(message);
    if (!signed) {
      if (this.first) throw new Error('the first message of the answer is not signed');
      this.unsigned.push(message);
      if (this.unsigned.length > MAX_UNSIGNED_RUN) {
        throw new Error(`more than ${MAX_UNSIGNED_RUN} unsigned messages in a row`);
      }
      return;
    }
    const hmac = createHmac('sha256', this.key.secret).update(priorMac(this.mac));
    if (this.first) {
      hmac.update(signed.body).update(tsigVariables(this.key, signed));
    } else {
      for (const m of this.unsigned) hmac.update(m);
      hmac.update(signed.body).update(u48(signed.timeSigned)).update(u16(signed.fudge));
    }
    if (signed.error !== 0) throw new Error(`the answer carries the TSIG error ${tsigErrorName(signed.error)}`);
    if (!macMatches(signed.mac, hmac.digest()))
      throw new Error('a message of the answer does not carry a valid TSIG signature');
    this.mac = Buffer.from(signed.mac);
    this.unsigned = [];
    this.first = false;
  }

  /** The last message must be signed. */
  end(): void {
    if (this.first || this.unsigned.length > 0) throw new Error('the last message of the answer is not signed');
  }
}

/** A single signed answer (RFC 8945 section 5.3): an answer of one message. Throws as `message` does. */
export function verifyResponse(response: Buffer, key: TsigKey, requestMac: Buffer): void {
  const verifier = new TsigStreamVerifier(key, requestMac);
  verifier.message(response);
  verifier.end();
}
