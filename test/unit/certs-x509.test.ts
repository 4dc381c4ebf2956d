import { X509Certificate } from 'node:crypto';
import { expect } from 'chai';
import forge from 'node-forge';
import { createCertificateAuthority, generateRsaKeyPem, issueCertificate } from '../../certs/x509.ts';

/** The ASN.1 string type (X.680 universal tag) a certificate uses for its subject's or issuer's commonName. */
function commonNameTag(pem: string, which: 'subject' | 'issuer'): number | undefined {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64').toString('binary');
  const tbs = (forge.asn1.fromDer(der).value as forge.asn1.Asn1[])[0] as forge.asn1.Asn1;
  const name = (tbs.value as forge.asn1.Asn1[])[which === 'issuer' ? 3 : 5] as forge.asn1.Asn1;
  const rdn = (name.value as forge.asn1.Asn1[])[0] as forge.asn1.Asn1;
  const attribute = (rdn.value as forge.asn1.Asn1[])[0] as forge.asn1.Asn1;
  return ((attribute.value as forge.asn1.Asn1[])[1] as forge.asn1.Asn1).type;
}

const PRINTABLE_STRING = 19; // X.680 UniversalString tag numbers
const UTF8_STRING = 12;

describe('certs: x509 helpers', () => {
  it('encodes a commonName outside the PrintableString alphabet (like name@timestamp) as UTF8String, for Go parsers', () => {
    const ca = createCertificateAuthority({
      commonName: 'web-ca@1795955552',
      notBefore: new Date(),
      validityDays: 1,
    });
    expect(commonNameTag(ca.certPem, 'subject')).to.equal(UTF8_STRING);
    const leaf = issueCertificate({
      ca,
      commonName: 'web.ns.svc',
      usage: 'serverAuth',
      notBefore: new Date(),
      validityDays: 1,
    });
    expect(commonNameTag(leaf.certPem, 'subject')).to.equal(PRINTABLE_STRING);
    expect(commonNameTag(leaf.certPem, 'issuer')).to.equal(UTF8_STRING);
    // The issuer name is byte-identical to the CA's subject, so strict chain builders link them.
    const caDer = new X509Certificate(ca.certPem);
    const leafX = new X509Certificate(leaf.certPem);
    expect(leafX.issuer).to.equal(caDer.subject);
    expect(leafX.checkIssued(caDer)).to.equal(true);
    // The signatures verify with OpenSSL (Node's X509Certificate): the CA's own, and the leaf's by the CA.
    expect(caDer.verify(caDer.publicKey)).to.equal(true);
    expect(leafX.verify(caDer.publicKey)).to.equal(true);
    expect(leafX.verify(leafX.publicKey)).to.equal(false);
  });

  it('certifies a key passed in as keyPem, with an explicit notAfter', async () => {
    const keyPem = await generateRsaKeyPem(1024);
    const notBefore = new Date('2026-01-01T00:00:00Z');
    const notAfter = new Date('2026-01-02T12:00:00Z');
    const ca = createCertificateAuthority({ commonName: 'ca', notBefore, notAfter, validityDays: 99, keyPem });
    expect(ca.keyPem).to.equal(keyPem);
    const x = new X509Certificate(ca.certPem);
    expect(new Date(x.validTo).toISOString()).to.equal(notAfter.toISOString());
    expect(x.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(keyPem)))).to.equal(true);
  });
});
