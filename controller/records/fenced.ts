import type { WriteFence } from '../../kube/lease-fence.ts';
import type { DnsTransport } from './dns/client.ts';
import type { RecordFileSystem } from './file-record-store.ts';

/**
 * The file store's file system with every change asked of the fence first: a replica that cannot
 * prove it leads creates, renames and deletes no record file. Reads pass.
 */
export function fencedFileSystem(fs: RecordFileSystem, fence: WriteFence): RecordFileSystem {
  return {
    readFile: (path, encoding) => fs.readFile(path, encoding),
    mkdir: (path, options) => fs.mkdir(path, options),
    writeFile: async (path, data, options) => {
      fence.assertMayWrite(`write ${path}`);
      await fs.writeFile(path, data, options);
    },
    rename: async (from, to) => {
      fence.assertMayWrite(`rename ${from} to ${to}`);
      await fs.rename(from, to);
    },
    unlink: async (path) => {
      fence.assertMayWrite(`delete ${path}`);
      await fs.unlink(path);
    },
  };
}

/**
 * The DNS store's transport with every UPDATE asked of the fence first (queries and zone transfers
 * pass): a replica that cannot prove it leads sends no RFC 2136 UPDATE.
 */
export function fencedDnsTransport(transport: DnsTransport, fence: WriteFence): DnsTransport {
  return {
    update: async (message, what) => {
      fence.assertMayWrite(`DNS UPDATE (${what})`);
      await transport.update(message, what);
    },
    serial: (zone) => transport.serial(zone),
    transfer: (zone) => transport.transfer(zone),
  };
}
