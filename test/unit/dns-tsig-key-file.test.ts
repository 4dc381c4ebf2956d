import { expect } from 'chai';
import { TsigKeyFile } from '../../controller/records/dns/tsig-key-file.ts';
import { parseTsigKey } from '../../controller/records/records-config.ts';

const keyText = (secret: string) =>
  `key "staticsite-controller" {\n\talgorithm hmac-sha256;\n\tsecret "${secret}";\n};\n`;
const FIRST = Buffer.alloc(32, 1).toString('base64');
const SECOND = Buffer.alloc(32, 2).toString('base64');

/** A one-file file system whose contents and version the test sets, counting reads. */
function oneFile(text: string) {
  const file = { text, version: 1, reads: 0, missing: false };
  const fs = {
    stat: async () => {
      if (file.missing) throw new Error('ENOENT: no such file or directory');
      return { ino: 7, mtimeMs: file.version, ctimeMs: file.version, size: file.text.length };
    },
    readFile: async () => {
      file.reads++;
      return file.text;
    },
  };
  return { file, fs };
}

describe('controller: the TSIG key file, read again when it changes', () => {
  it('reads the file once while it is unchanged', async () => {
    const { file, fs } = oneFile(keyText(FIRST));
    const key = new TsigKeyFile('/keys/tsig.key', parseTsigKey, fs);
    for (let i = 0; i < 3; i++) expect((await key.current()).secret.toString('base64')).to.equal(FIRST);
    expect(file.reads).to.equal(1);
  });

  it('a rotated file brings the new key', async () => {
    const { file, fs } = oneFile(keyText(FIRST));
    const key = new TsigKeyFile('/keys/tsig.key', parseTsigKey, fs);
    await key.current();
    Object.assign(file, { text: keyText(SECOND), version: 2 });
    expect((await key.current()).secret.toString('base64')).to.equal(SECOND);
  });

  it('a broken or missing file is an error naming it, never the old key, until it is fixed', async () => {
    const { file, fs } = oneFile(keyText(FIRST));
    const key = new TsigKeyFile('/keys/tsig.key', parseTsigKey, fs);
    await key.current();
    Object.assign(file, { text: 'key "staticsite-controller" { algorithm hmac-md5; };', version: 2 });
    await expectError(key.current(), '/keys/tsig.key: algorithm hmac-md5; only hmac-sha256 is supported');
    file.missing = true;
    await expectError(key.current(), 'cannot read the TSIG key file /keys/tsig.key: ENOENT: no such file or directory');
    Object.assign(file, { missing: false, text: keyText(SECOND), version: 3 });
    expect((await key.current()).secret.toString('base64')).to.equal(SECOND);
  });
});

async function expectError(promise: Promise<unknown>, message: string): Promise<void> {
  let error: Error | undefined;
  try {
    await promise;
  } catch (e) {
    error = e as Error;
  }
  expect(error?.message).to.equal(message);
}
