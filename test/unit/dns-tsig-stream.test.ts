import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { nameWire, queryMessage, TsigStreamVerifier, TYPE } from '../../controller/records/dns/wire.ts';

const key = { name: 'staticsite-controller', secret: Buffer.alloc(32, 7) };
const ALGORITHM = 'hmac-sha256';
const TIME = 1_764_633_600;
const FUDGE = 300;

const u16 = (v: number) => Buffer.from([v >> 8, v & 0xff]);
const u48 = (v: number) => {
  const b = Buffer.alloc(6);
  b.writeUIntBE(v, 0, 6);
  return b;
};
const withLength = (mac: Buffer) => Buffer.concat([u16(mac.length), mac]);

/**
 * A server's side of RFC 8945 section 5.3.1, written here from the RFC: the first message's MAC
 * covers the request MAC, the message and all TSIG variables (section 4.3.3); a later signed
 * message's MAC covers the previous MAC, the unsigned messages since it, the message and only the
 * timers. Returns the message with its TSIG record appended (ARCOUNT + 1), and the MAC.
 */
function sign(message: Buffer, priorMac: Buffer, unsignedSince: Buffer[], first: boolean) {
  const hmac = createHmac('sha256', key.secret).update(withLength(priorMac));
  for (const m of unsignedSince) hmac.update(m);
  hmac.update(message);
  const timers = Buffer.concat([u48(TIME), u16(FUDGE)]);
  if (first) {
    const variables = [nameWire(key.name), u16(255), Buffer.alloc(4), nameWire(ALGORITHM), timers, u16(0), u16(0)];
    hmac.update(Buffer.concat(variables));
  } else hmac.update(timers);
  const mac = hmac.digest();
  const rdata = Buffer.concat([nameWire(ALGORITHM), timers, withLength(mac), message.subarray(0, 2), u16(0), u16(0)]);
  const record = Buffer.concat([
    nameWire(key.name),
    u16(TYPE.TSIG),
    u16(255),
    Buffer.alloc(4),
    u16(rdata.length),
    rdata,
  ]);
  const signed = Buffer.concat([message, record]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { signed, mac };
}

const REQUEST_MAC = Buffer.alloc(32, 9);
const message = (n: number) => queryMessage(`m${n}.sites.staticsite.dev`, TYPE.AXFR, 4242);

/** An answer of `count` messages of which those at `signedAt` are signed, as a server would send it. */
function answer(count: number, signedAt: (i: number) => boolean): Buffer[] {
  const out: Buffer[] = [];
  let prior = REQUEST_MAC;
  let unsigned: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    if (!signedAt(i)) {
      unsigned.push(message(i));
      out.push(message(i));
      continue;
    }
    const { signed, mac } = sign(message(i), prior, unsigned, i === 0);
    out.push(signed);
    prior = mac;
    unsigned = [];
  }
  return out;
}

function verify(messages: Buffer[]): void {
  const verifier = new TsigStreamVerifier(key, REQUEST_MAC);
  for (const m of messages) verifier.message(m);
  verifier.end();
}

/** RFC 8945 section 5.3.1: which messages of a multi-message answer must be signed, and over what. */
describe('TSIG over a multi-message answer (RFC 8945 section 5.3.1)', () => {
  it('accepts every message signed, and signed messages with unsigned ones between them', () => {
    expect(() => verify(answer(4, () => true))).to.not.throw();
    expect(() => verify(answer(5, (i) => i === 0 || i === 3 || i === 4))).to.not.throw();
  });

  it('refuses an unsigned message altered on the way: the next signed MAC covers it', () => {
    const messages = answer(3, (i) => i !== 1);
    const altered = Buffer.from(messages[1] as Buffer);
    const at = altered.length - 7; // a letter of the question's name
    altered.writeUInt8(altered.readUInt8(at) ^ 1, at);
    expect(() => verify([messages[0] as Buffer, altered, messages[2] as Buffer])).to.throw(
      'a message of the answer does not carry a valid TSIG signature',
    );
  });

  it('accepts 99 unsigned messages in a row and refuses the 100th', () => {
    expect(() => verify(answer(101, (i) => i === 0 || i === 100))).to.not.throw();
    expect(() => verify(answer(102, (i) => i === 0 || i === 101))).to.throw('more than 99 unsigned messages in a row');
  });

  it('refuses an answer whose first message is unsigned', () => {
    expect(() => verify(answer(2, (i) => i === 1))).to.throw('the first message of the answer is not signed');
  });

  it('refuses an answer whose last message is unsigned, or that ends before any message', () => {
    expect(() => verify(answer(3, (i) => i < 2))).to.throw('the last message of the answer is not signed');
    expect(() => new TsigStreamVerifier(key, REQUEST_MAC).end()).to.throw(
      'the last message of the answer is not signed',
    );
  });

  it('refuses a record cut short, naming it', () => {
    const [first] = answer(1, () => true);
    expect(() => verify([(first as Buffer).subarray(0, (first as Buffer).length - 10)])).to.throw(
      'a message of the answer has a malformed record or TSIG record',
    );
  });
});
