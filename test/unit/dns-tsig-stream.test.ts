import { expect } from 'chai';
import { queryMessage, TsigStreamVerifier, TYPE } from '../../controller/records/dns/wire.ts';

const key = { name: 'staticsite-controller', secret: Buffer.alloc(32, 7) };

/** RFC 8945 section 5.3.1's rules on which messages of a multi-message answer must be signed. */
describe('TSIG over a multi-message answer (RFC 8945 section 5.3.1)', () => {
  const unsigned = queryMessage('sites.staticsite.dev', TYPE.AXFR, 1);

  it('refuses an answer whose first message is unsigned', () => {
    const verifier = new TsigStreamVerifier(key, Buffer.alloc(32));
    expect(() => verifier.message(unsigned)).to.throw('the first message of the answer is not signed');
  });

  it('refuses an answer that ends before a signed message', () => {
    expect(() => new TsigStreamVerifier(key, Buffer.alloc(32)).end()).to.throw(
      'the last message of the answer is not signed',
    );
  });
});
