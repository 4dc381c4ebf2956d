import type { WriteFence } from '../../kube/lease-fence.ts';
import { DnsClient, type DnsObserver } from './dns/client.ts';
import { DnsRecordStore } from './dns/dns-record-store.ts';
import { TsigKeyFile } from './dns/tsig-key-file.ts';
import type { TsigKey } from './dns/wire.ts';
import { fencedDnsTransport, fencedFileSystem } from './fenced.ts';
import { FileRecordStore, nodeFileSystem } from './file-record-store.ts';
import type { RecordStore } from './record-store.ts';

/** Where the controller keeps external records: `--records dir:DIR` or `--records dns:HOST:PORT`. */
export type RecordsConfig =
  | { kind: 'dir'; dir: string }
  | { kind: 'dns'; host: string; port: number; zone: string; tsigKeyFile: string; owner: string };

export class RecordsConfigError extends Error {
  override name = 'RecordsConfigError';
}

/** Parses `--records` (with the DNS flags it needs); a bad value is a usage problem, named. */
export function parseRecordsFlag(
  value: string,
  dns: { zone?: string; tsigKeyFile?: string; owner: string },
): RecordsConfig {
  if (value.startsWith('dir:') && value.length > 4) return { kind: 'dir', dir: value.slice(4) };
  const match = /^dns:(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value);
  if (!match) {
    throw new RecordsConfigError(
      `--records ${value}: expected dir:DIR or dns:HOST:PORT (for example dns:10.0.0.53:53)`,
    );
  }
  const port = Number(match[3]);
  if (port < 1 || port > 65535) throw new RecordsConfigError(`--records ${value}: the port must be 1-65535`);
  if (!dns.zone) throw new RecordsConfigError('--records dns:… needs --dns-zone (the zone the records go in)');
  if (!dns.tsigKeyFile) {
    throw new RecordsConfigError('--records dns:… needs --dns-tsig-key-file (a BIND key file, as tsig-keygen writes)');
  }
  return {
    kind: 'dns',
    host: (match[1] ?? match[2]) as string,
    port,
    zone: dns.zone,
    tsigKeyFile: dns.tsigKeyFile,
    owner: dns.owner,
  };
}

/** A BIND key file (`key "NAME" { algorithm hmac-sha256; secret "BASE64"; };`), as tsig-keygen writes it. */
export function parseTsigKey(text: string, file: string): TsigKey {
  const key = /key\s+"?([^"\s{]+)"?\s*\{([^}]*)\}/.exec(text);
  if (!key) throw new RecordsConfigError(`${file}: no key "NAME" { … } block`);
  const algorithm = /algorithm\s+"?([\w-]+)"?\s*;/.exec(key[2] as string)?.[1]?.toLowerCase();
  if (algorithm !== 'hmac-sha256') {
    throw new RecordsConfigError(`${file}: algorithm ${algorithm ?? '(none)'}; only hmac-sha256 is supported`);
  }
  const secret = /secret\s+"([A-Za-z0-9+/=]+)"\s*;/.exec(key[2] as string)?.[1];
  if (!secret) throw new RecordsConfigError(`${file}: the key has no base64 secret`);
  return { name: key[1] as string, secret: Buffer.from(secret, 'base64') };
}

/**
 * The store the configuration names. The TSIG key file is read here, so a missing or broken one
 * stops the start, and again whenever it changes (tsig-key-file.ts).
 */
export async function createRecordStore(
  config: RecordsConfig,
  observe?: DnsObserver,
  fence?: WriteFence,
): Promise<RecordStore> {
  if (config.kind === 'dir') {
    return new FileRecordStore(config.dir, fence ? fencedFileSystem(nodeFileSystem, fence) : nodeFileSystem);
  }
  const keyFile = new TsigKeyFile(config.tsigKeyFile, parseTsigKey);
  try {
    await keyFile.current();
  } catch (error) {
    if (error instanceof RecordsConfigError) throw error;
    throw new RecordsConfigError((error as Error).message);
  }
  const client = new DnsClient({
    server: { host: config.host, port: config.port },
    key: () => keyFile.current(),
    ...(observe && { observe }),
  });
  return new DnsRecordStore(fence ? fencedDnsTransport(client, fence) : client, {
    zone: config.zone,
    owner: config.owner,
  });
}
